"""Per-turn checkpoints owned by the daemon: the text of every file before a turn first
changed it, so ``tether/rewind`` can put files back without git."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.editor.port import (
    Conflict,
    Document,
    Editor,
    PermissionReply,
    PermissionRequest,
    Unconfirmed,
    WriteOutcome,
    Written,
)
from tether.transcript.payloads import CheckpointData, CheckpointMissingData
from tether.transcript.records import ProgressRecord
from tether.transcript.resume import ResumedSession


@dataclass
class TurnCheckpoint:
    turn_id: str
    parent_uuid: str | None
    """The transcript chain head before the turn: the rewound branch continues from it."""
    before: dict[Path, str | None] = field(default_factory=lambda: dict[Path, str | None]())
    """Text before the turn first changed the file (None: it did not exist)."""
    missing: dict[Path, str] = field(default_factory=lambda: dict[Path, str]())
    """Files the turn changed whose text before is not known, each with the reason."""
    after: dict[Path, str] = field(default_factory=lambda: dict[Path, str]())
    """The text the turn's last write through the editor left in each file; a file a shell
    command changed after that is not here (its text is on disk)."""


@dataclass(frozen=True)
class RestorePlan:
    """What rewinding to a turn puts back."""

    checkpoint: TurnCheckpoint
    files: dict[Path, str | None]
    """Per file, its text before the turn (None: remove it)."""
    missing: dict[Path, str]
    """Files that cannot be put back, each with the reason."""


class Checkpoints:
    def __init__(self) -> None:
        self.turns: list[TurnCheckpoint] = []
        self.current: TurnCheckpoint | None = None

    def begin(self, turn_id: str, parent_uuid: str | None) -> None:
        self.current = TurnCheckpoint(turn_id, parent_uuid)
        self.turns.append(self.current)

    def find(self, turn_id: str) -> int | None:
        return next((i for i, t in enumerate(self.turns) if t.turn_id == turn_id), None)

    def restore_plan(self, turn_id: str) -> RestorePlan | None:
        """What rewinding ``turn_id`` and every later turn puts back: the earliest of these
        turns that changed a file knows what it was before."""
        index = self.find(turn_id)
        if index is None:
            return None
        files: dict[Path, str | None] = {}
        missing: dict[Path, str] = {}
        for turn in self.turns[index:]:
            for path, text in turn.before.items():
                if path not in missing:
                    files.setdefault(path, text)
            for path, reason in turn.missing.items():
                if path not in files:
                    missing.setdefault(path, reason)
        return RestorePlan(self.turns[index], files, missing)

    @classmethod
    def rebuild(
        cls,
        turns: list[tuple[str, str | None]],
        saved: list[tuple[str, Path, str | None]],
        missing: Sequence[tuple[str, Path, str]] = (),
    ) -> Checkpoints:
        """Checkpoints of a resumed session: ``turns`` as (turn id, parent uuid) in order,
        ``saved`` the pre-turn texts recorded in the transcript, ``missing`` the files
        changed with no text kept, each with the reason."""
        checkpoints = cls()
        for turn_id, parent in turns:
            checkpoints.turns.append(TurnCheckpoint(turn_id, parent))
        by_id = {t.turn_id: t for t in checkpoints.turns}
        for turn_id, path, text in saved:
            turn = by_id.get(turn_id)
            if turn is not None and path not in turn.missing:
                turn.before.setdefault(path, text)
        for turn_id, path, reason in missing:
            turn = by_id.get(turn_id)
            if turn is not None and path not in turn.before:
                turn.missing.setdefault(path, reason)
        return checkpoints

    def drop_from(self, turn_id: str) -> None:
        index = self.find(turn_id)
        if index is not None:
            del self.turns[index:]
        self.current = None


CheckpointRecorder = Callable[[ProgressRecord], None]
"""Persists a pre-turn text (the transcript), so rewind survives a restart."""


class CheckpointingEditor:
    """Wraps an Editor and remembers pre-turn texts of the files it writes."""

    def __init__(
        self, inner: Editor, checkpoints: Checkpoints, session_id: str, record: CheckpointRecorder
    ) -> None:
        self.inner = inner
        self.checkpoints = checkpoints
        self._session_id = session_id
        self._record = record

    async def read(self, path: Path) -> Document:
        return await self.inner.read(path)

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        outcome = await self.inner.write(path, new_text, base=base, label=label)
        turn = self.checkpoints.current
        # An unconfirmed write may have landed: undo must be able to put it back too.
        landed = isinstance(outcome, Written | Unconfirmed)
        if landed and turn is not None:
            turn.after[path] = (
                outcome.document.text if isinstance(outcome, Written) else outcome.likely.text
            )
        if landed and turn is not None and path not in turn.before and path not in turn.missing:
            turn.before[path] = base.text if base is not None else None
            self._record(
                ProgressRecord(
                    session_id=self._session_id,
                    turn_id=turn.turn_id,
                    data=CheckpointData(
                        turn_id=turn.turn_id, path=str(path), before=turn.before[path]
                    ),
                )
            )
        return outcome

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
        return await self.inner.ask_permission(request)

    async def restore(self, path: Path, text: str | None) -> Restored:
        """Put ``path`` back to ``text`` (None: remove it) through the editor."""
        try:
            current: Document | None = await self.inner.read(path)
        except FileNotFoundError:
            current = None
        except (OSError, UnicodeDecodeError) as e:
            return Restored(path, False, f"it could not be read: {e}")
        if text is None:
            if current is None:
                return Restored(path, False)
            try:
                await asyncio.to_thread(path.unlink, missing_ok=True)
            except OSError as e:
                return Restored(path, False, f"it could not be removed: {e}")
            return Restored(path, True)
        if current is not None and current.text == text:
            return Restored(path, False)
        reason = "it kept changing while it was being restored"
        for _ in range(3):
            outcome = await self.inner.write(path, text, base=current, label="Tether: rewind")
            if not isinstance(outcome, Conflict):
                return Restored(path, True)
            current, reason = outcome.current, outcome.reason
        return Restored(path, False, reason)


@dataclass(frozen=True)
class Restored:
    """What rewinding one file did: changed it back, found it already so, or failed."""

    path: Path
    changed: bool
    problem: str | None = None


def saved_checkpoints(resumed: ResumedSession) -> Checkpoints:
    """Rewind points of a resumed session, from its transcript: every turn on the chain,
    with the pre-turn texts recorded while it ran."""
    loaded = resumed.loaded
    progress = loaded.progress if loaded is not None else []
    saved = [
        (p.data.turn_id, Path(p.data.path), p.data.before)
        for p in progress
        if isinstance(p.data, CheckpointData)
    ]
    missing = [
        (p.data.turn_id, Path(p.data.path), p.data.reason)
        for p in progress
        if isinstance(p.data, CheckpointMissingData)
    ]
    return Checkpoints.rebuild(resumed.turn_parents, saved, missing)
