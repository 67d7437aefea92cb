"""The change set for editors without a plugin: code actions on the lines a turn changed and
the commands they carry (``tether.keepChanges``, ``tether.undoChanges``).

Hunks of every open session of the file's workspace folder are offered; each action names
its session and hunks. Keeping answers with what was kept; undoing answers at once (an undo
is an ``applyEdit`` the client must apply while it may be waiting for the answer, as eglot
does) and says how it went with one ``window/showMessage``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from tether.errors import SessionError
from tether.lsp.actions import ReviewAction
from tether.lsp.changes import review_actions
from tether.lsp.hub import SessionHub, uri_to_path
from tether.lsp.plain_turns import PlainTurns
from tether.protocol.base import LenientWireModel
from tether.session.change_model import Outcome, Selection

if TYPE_CHECKING:
    from tether.session.session import Session


class ChangeArgs(LenientWireModel):
    uri: str
    session_id: str | None = None
    """Default: the folder's current session."""
    hunk_ids: list[str] = Field(default_factory=lambda: list[str]())
    """Default: every pending change of the file."""


class PlainChanges:
    def __init__(self, hub: SessionHub, turns: PlainTurns) -> None:
        self.hub = hub
        self.turns = turns

    async def actions(self, root: Path, path: Path, first: int, last: int) -> list[ReviewAction]:
        """(kind, command, why disabled) for the changes on lines ``first..last`` of
        ``path``."""
        found: list[ReviewAction] = []
        for session in self.hub.sessions_in(root):
            if not session.changes.touched(path):
                continue
            try:
                _text, located = await session.changes.locate(self.hub.editor_of(session), path)
            except SessionError:
                continue
            found += review_actions(session.session_id, path, located, first, last)
        return found

    def _target(self, args: ChangeArgs) -> tuple[Session, Selection, str]:
        root = self.turns.root_of(args.uri)
        session = self.hub.get(args.session_id) if args.session_id else self.turns.session(root)
        try:
            path = uri_to_path(args.uri).resolve()
        except ValueError as e:
            raise SessionError(str(e))
        return session, Selection(tuple(args.hunk_ids), None, path), path.name

    def keep(self, args: ChangeArgs) -> dict[str, Any]:
        session, selection, name = self._target(args)
        outcome = session.changes.keep(selection)
        self._tell(outcome, ("kept", "keep"), name)
        return {"sessionId": session.session_id, "kept": [h.hunk_id for h in outcome.done]}

    def undo(self, args: ChangeArgs) -> dict[str, Any]:
        session, selection, name = self._target(args)
        session.changes.select(selection)  # unknown ids are refused now, not later
        if session.busy:
            raise SessionError("a turn is running; stop it first with tether.cancel")

        async def undo() -> None:
            try:
                editor = self.hub.editor_of(session)
                outcome = await session.undo_changes(selection, editor)
            except SessionError as e:
                self.turns.error(f"could not undo: {e}")
                return
            self._tell(outcome, ("undid", "undo"), name)

        self.turns.spawn(undo())
        return {"sessionId": session.session_id}

    def _tell(self, outcome: Outcome, verbs: tuple[str, str], name: str) -> None:
        done, do = verbs
        if outcome.done:
            count = len(outcome.done)
            self.turns.say(f"{done} {count} change{'s' if count > 1 else ''} in {name}")
        for refusal in outcome.refused:
            self.turns.error(f"could not {do} a change in {name}: {refusal.reason}")
        for note in outcome.notes:
            self.turns.say(note)
        if not outcome.done and not outcome.refused:
            self.turns.say(f"no pending changes in {name}")
