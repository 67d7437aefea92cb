"""The model hears what the user undid: with the next prompt of the session, one short note
(a ``changes_undone`` attachment in the transcript) lists each hunk undone since the last
note — the file, its lines now, and what the change did — so the model does not quietly make
it again. Hunks the user brought back before that prompt are left out, and a change of the
last turn the user reverted by hand in the editor counts as undone (the files of the last
turn and of the hunks to report are looked at again; nothing older is).
"""

from __future__ import annotations

import logging
from pathlib import Path

from tether import prompts
from tether.core.messages import Message, TextBlock
from tether.editor.port import Editor
from tether.errors import SessionError
from tether.session.change_model import Hunk
from tether.session.changes import ChangeSet
from tether.transcript.payloads import AttachmentKind

log = logging.getLogger(__name__)

MAX_LISTED = 20
"""Hunks named one by one; more are counted (a note stays small)."""


class UndoNotes:
    def __init__(self, changes: ChangeSet, editor: Editor, root: Path) -> None:
        self.changes = changes
        self.editor = editor
        self.root = root

    async def take(self) -> list[tuple[AttachmentKind, Message]]:
        """The note for the next prompt (nothing when nothing was undone since the last)."""
        await self._look_again()
        changes = self.changes
        if not changes.unnoted:
            return []
        hunks: list[Hunk] = []
        for hunk_id in list(changes.unnoted):
            try:
                hunk = changes.find(hunk_id)
            except SessionError:
                changes.unnoted.pop(hunk_id, None)
                continue
            if hunk.state == "undone":
                hunks.append(hunk)
        if not hunks:
            changes.unnoted.clear()
            return []
        lines = [self._line(h, changes.unnoted.get(h.hunk_id)) for h in hunks[:MAX_LISTED]]
        if len(hunks) > MAX_LISTED:
            lines.append(f"- and {len(hunks) - MAX_LISTED} more changes")
        text = prompts.render("changes/undone.md", changes="\n".join(lines)).strip()
        changes.noted([h.hunk_id for h in hunks])
        changes.unnoted.clear()
        return [("changes_undone", Message(role="user", content=[TextBlock(text=text)]))]

    async def _look_again(self) -> None:
        """Find the states of the files concerned as the user left them."""
        paths = {self.changes.find(i).path for i in self._known(list(self.changes.unnoted))}
        last = next(reversed(self.changes.turns.values()), None)
        if last is not None:
            paths |= set(last.files)
        for path in sorted(paths, key=str):
            try:
                await self.changes.locate(self.editor, path)
            except SessionError as e:
                log.info("could not look at %s again: %s", path, e)

    def _known(self, hunk_ids: list[str]) -> list[str]:
        known: list[str] = []
        for hunk_id in hunk_ids:
            try:
                self.changes.find(hunk_id)
                known.append(hunk_id)
            except SessionError:
                self.changes.unnoted.pop(hunk_id, None)
        return known

    def _line(self, hunk: Hunk, place: tuple[int, int] | None) -> str:
        try:
            shown = hunk.path.relative_to(self.root).as_posix()
        except ValueError:
            shown = str(hunk.path)
        start, end = place if place is not None else hunk.old_range
        if end > start + 1:
            where = f"lines {start + 1}-{end}"
        elif end == start + 1:
            where = f"line {start + 1}"
        else:
            where = f"at line {start + 1}"
        return f"- {shown} {where}: you had {hunk.summary}"
