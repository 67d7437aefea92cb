"""Per-turn checkpoints owned by the daemon: the text of every file before a turn first
changed it, so ``tether/rewind`` can put files back without git."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tether.editor.port import (
    Conflict,
    Document,
    Editor,
    PermissionReply,
    PermissionRequest,
    WriteOutcome,
    Written,
)


@dataclass
class TurnCheckpoint:
    turn_id: str
    message_index: int
    """len(engine.messages) before the turn: the conversation is cut back to this."""
    parent_uuid: str | None
    """The transcript chain head before the turn: the rewound branch continues from it."""
    before: dict[Path, str | None] = field(default_factory=lambda: dict[Path, str | None]())
    """Text before the turn first changed the file (None: it did not exist)."""


class Checkpoints:
    def __init__(self) -> None:
        self.turns: list[TurnCheckpoint] = []
        self.current: TurnCheckpoint | None = None
        self.edited: dict[Path, float] = {}
        """Files changed since the last diagnostics check, with the time of the change."""

    def begin(self, turn_id: str, message_index: int, parent_uuid: str | None) -> None:
        self.current = TurnCheckpoint(turn_id, message_index, parent_uuid)
        self.turns.append(self.current)

    def find(self, turn_id: str) -> int | None:
        return next((i for i, t in enumerate(self.turns) if t.turn_id == turn_id), None)

    def restore_plan(self, turn_id: str) -> tuple[TurnCheckpoint, dict[Path, str | None]] | None:
        """The checkpoint of ``turn_id`` and, per file, its text before that turn."""
        index = self.find(turn_id)
        if index is None:
            return None
        plan: dict[Path, str | None] = {}
        for turn in self.turns[index:]:
            for path, text in turn.before.items():
                plan.setdefault(path, text)
        return self.turns[index], plan

    @classmethod
    def rebuild(
        cls,
        turns: list[tuple[str, int, str | None]],
        saved: list[tuple[str, Path, str | None]],
    ) -> Checkpoints:
        """Checkpoints of a resumed session: ``turns`` as (turn id, message index, parent
        uuid) in order, ``saved`` the pre-turn texts recorded in the transcript."""
        checkpoints = cls()
        for turn_id, index, parent in turns:
            checkpoints.turns.append(TurnCheckpoint(turn_id, index, parent))
        by_id = {t.turn_id: t for t in checkpoints.turns}
        for turn_id, path, text in saved:
            turn = by_id.get(turn_id)
            if turn is not None:
                turn.before.setdefault(path, text)
        return checkpoints

    def drop_from(self, turn_id: str) -> None:
        index = self.find(turn_id)
        if index is not None:
            del self.turns[index:]
        self.current = None


class CheckpointingEditor:
    """Wraps an Editor and remembers pre-turn texts of the files it writes."""

    def __init__(self, inner: Editor, checkpoints: Checkpoints) -> None:
        self.inner = inner
        self.checkpoints = checkpoints
        self.on_checkpoint: Callable[[str, Path, str | None], None] | None = None
        """Persists a pre-turn text (the transcript), so rewind survives a restart."""

    async def read(self, path: Path) -> Document:
        return await self.inner.read(path)

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        outcome = await self.inner.write(path, new_text, base=base, label=label)
        turn = self.checkpoints.current
        if isinstance(outcome, Written):
            self.checkpoints.edited[path] = time.monotonic()
            if turn is not None and path not in turn.before:
                turn.before[path] = base.text if base is not None else None
                if self.on_checkpoint is not None:
                    self.on_checkpoint(turn.turn_id, path, turn.before[path])
        return outcome

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
        return await self.inner.ask_permission(request)

    async def restore(self, path: Path, text: str | None) -> bool:
        """Put ``path`` back to ``text`` (None: remove it) through the editor."""
        try:
            current: Document | None = await self.inner.read(path)
        except FileNotFoundError:
            current = None
        if text is None:
            if current is not None:
                await asyncio.to_thread(path.unlink, missing_ok=True)
            return current is not None
        if current is not None and current.text == text:
            return False
        for _ in range(3):
            outcome = await self.inner.write(path, text, base=current, label="Tether: rewind")
            if not isinstance(outcome, Conflict):
                return True
            current = outcome.current
        return False
