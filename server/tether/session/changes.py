"""A session's change set: what each turn changed, as hunks the user keeps or undoes.

When a turn ends, every file it changed — with Edit, Write, NotebookEdit or a shell command
(the checkpoints know them all) — is kept with its text before the turn and after it, in
memory and in the transcript (``change_after`` records beside the checkpoints), so a resumed
session has the same hunks. Nothing is diffed then: a turn's hunks are derived the first time
someone asks (``hunks``), numbered ``<turnId>-<n>`` over the turn's files in path order, so an
id never changes, whatever happens later or after a restart.

A hunk's state is ``pending`` until the user keeps it or undoes it (``hunk_state`` records).
Undoing is ``undo.py``'s; here the hunks are found in the files as they are now (``locate``),
which also notices what the user did in the editor itself: a pending hunk whose lines are back
to what they were before the turn was undone by hand, and an undone hunk whose lines are the
turn's again was brought back (the editor's own undo of Tether's undo). Once a later turn has
changed the file, the text no longer tells what the user did, and states stay as they are.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from tether.editor.disk import read_text_file
from tether.editor.port import Editor
from tether.errors import SessionError
from tether.protocol.updates import ChangesUpdate, SessionUpdate
from tether.session.change_model import (
    BIG_TEXT,
    FileChange,
    FileListing,
    Hunk,
    Located,
    Outcome,
    Refusal,
    Selection,
    TurnChanges,
)
from tether.session.checkpoints import CheckpointRecorder, Checkpoints, TurnCheckpoint
from tether.session.hunks import follow, split_lines
from tether.transcript.payloads import ChangeAfterData, HunkState, HunkStateData, UndoNotedData
from tether.transcript.records import ProgressRecord

log = logging.getLogger(__name__)

Publish = Callable[[SessionUpdate], None]


class ChangeSet:
    def __init__(
        self,
        checkpoints: Checkpoints,
        session_id: str,
        record: CheckpointRecorder,
        publish: Publish,
    ) -> None:
        self.checkpoints = checkpoints
        self._session_id = session_id
        self._record = record
        self._publish = publish
        self.turns: dict[str, TurnChanges] = {}
        """Ended turns that changed files, oldest first."""
        self.recorded_states: dict[str, tuple[HunkState, str | None]] = {}
        """Recorded states of hunks not derived yet (a resumed session's), by id."""
        self.unnoted: dict[str, tuple[int, int] | None] = {}
        """Undone hunks the model was not told of yet, with where their lines are now."""

    # -- turns ----------------------------------------------------------------------------

    async def turn_ended(self, turn_id: str) -> None:
        """Keep what the turn changed, and say so."""
        index = self.checkpoints.find(turn_id)
        if index is None:
            return
        try:
            await self._keep(self.checkpoints.turns[index])
        except Exception:  # the turn went well; its review is what is missing
            log.exception("the changes of turn %s could not be kept", turn_id)

    async def _keep(self, turn: TurnCheckpoint) -> None:
        paths = [*turn.before, *(p for p in turn.missing if p not in turn.before)]
        if not paths:
            return
        files: dict[Path, FileChange] = {}
        for path in paths:
            if path in turn.missing:
                change = FileChange(turn.turn_id, path, None, None, turn.missing[path])
            elif path in turn.after:
                change = FileChange(turn.turn_id, path, turn.before[path], turn.after[path])
            else:  # a shell command changed it last: its text is on disk
                after, problem = await _read_disk(path)
                change = FileChange(
                    turn.turn_id, path, turn.before[path], after, problem, shell=True
                )
            if change.before == change.after and change.problem is None:
                continue
            files[path] = change
            data = ChangeAfterData(
                turn_id=turn.turn_id,
                path=str(path),
                after=change.after,
                problem=change.problem,
                shell=change.shell,
            )
            record = ProgressRecord(session_id=self._session_id, turn_id=turn.turn_id, data=data)
            self._record(record)
        turn.after.clear()  # the change set holds the texts now
        if files:
            self.turns[turn.turn_id] = TurnChanges(turn.turn_id, files)
            self._changed([turn.turn_id], files)

    def drop(self, turn_ids: Iterable[str]) -> None:
        """Turns rewound (their checkpoints are gone already): their changes go with them.
        A state set while one of them was the last turn now counts from the last turn left,
        so the text of a file rewound tells again what the user did (``settled``)."""
        ordered = list(dict.fromkeys(turn_ids))
        gone = set(ordered)
        dropped = [self.turns.pop(t) for t in ordered if t in self.turns]
        for turn in dropped:
            for change in turn.files.values():
                for hunk in change.hunks:
                    self.unnoted.pop(hunk.hunk_id, None)
        for hunk_id, (_state, last) in list(self.recorded_states.items()):
            turn = self.turns.get(hunk_id.rpartition("-")[0])
            if last in gone and turn is not None:
                self.hunks_of(turn)  # derived, so that the new state is recorded below
        rebased: dict[tuple[str, Path, HunkState], list[Hunk]] = {}
        for turn in self.turns.values():
            for change in turn.files.values():
                for hunk in change.hunks:
                    if hunk.last_turn in gone:
                        hunk.last_turn = self.last_turn
                        rebased.setdefault((turn.turn_id, hunk.path, hunk.state), []).append(hunk)
        for (turn_id, path, state), hunks in rebased.items():
            self.record_state(turn_id, path, hunks, state)
        if dropped:
            paths = {p: None for t in dropped for p in t.files}
            self._changed([t.turn_id for t in dropped], paths)

    def _changed(self, turn_ids: Sequence[str], paths: Iterable[Path]) -> None:
        uris = sorted({p.as_uri() for p in paths})
        self._publish(ChangesUpdate(turn_ids=list(dict.fromkeys(turn_ids)), uris=uris))

    # -- hunks ----------------------------------------------------------------------------

    def hunks_of(self, turn: TurnChanges) -> list[FileChange]:
        """The turn's files with their hunks, derived on first use."""
        if not turn.derived:
            number = 0
            for path in sorted(turn.files, key=str):
                change = turn.files[path]
                if change.problem is not None:
                    continue
                for block in change.changed_blocks():
                    number += 1
                    hunk_id = f"{turn.turn_id}-{number}"
                    state, last = self.recorded_states.pop(hunk_id, ("pending", None))
                    change.hunks.append(Hunk(hunk_id, turn.turn_id, path, block, state, last))
            turn.derived = True
        return list(turn.files.values())

    async def prepare(self, turn_ids: Iterable[str]) -> None:
        """Diff the big files of these turns in a thread, so that deriving their hunks on
        the event loop only numbers them."""
        for turn_id in turn_ids:
            turn = self.turns.get(turn_id)
            if turn is None or turn.derived:
                continue
            for change in turn.files.values():
                if change.problem is None and change.blocks is None and change.big:
                    await asyncio.to_thread(change.changed_blocks)

    async def prepare_for(self, selection: Selection) -> None:
        """``prepare`` what ``selection`` is about."""
        named = [i.rpartition("-")[0] for i in selection.hunk_ids]
        await self.prepare(named or self._about(selection.turn_id, selection.path))

    def _about(self, turn_id: str | None, path: Path | None) -> list[str]:
        return [
            t.turn_id
            for t in self.turns.values()
            if turn_id in (None, t.turn_id) and (path is None or path in t.files)
        ]

    def find(self, hunk_id: str) -> Hunk:
        turn = self.turns.get(hunk_id.rpartition("-")[0])
        if turn is not None:
            for change in self.hunks_of(turn):
                for hunk in change.hunks:
                    if hunk.hunk_id == hunk_id:
                        return hunk
        raise SessionError(f"unknown hunkId: {hunk_id}")

    def select(self, selection: Selection) -> list[Hunk]:
        """The hunks ``selection`` names (unknown ids are an error)."""
        if selection.empty:
            raise SessionError("name the changes: give hunkIds, a uri or a turnId")
        if selection.turn_id is not None and self.checkpoints.find(selection.turn_id) is None:
            raise SessionError(f"unknown turnId for this session: {selection.turn_id}")
        if selection.hunk_ids:
            named = [self.find(i) for i in dict.fromkeys(selection.hunk_ids)]
            return [
                h
                for h in named
                if selection.turn_id in (None, h.turn_id) and selection.path in (None, h.path)
            ]
        return [
            hunk
            for change in self.files(selection.turn_id, selection.path)
            for hunk in change.hunks
            if hunk.state == "pending"
        ]

    def touched(self, path: Path) -> bool:
        """Whether an ended turn changed ``path`` (cheap: nothing is derived or read)."""
        return any(path in turn.files for turn in self.turns.values())

    def files(self, turn_id: str | None = None, path: Path | None = None) -> list[FileChange]:
        """The changed files of one turn or of all, of one path or of all, oldest first."""
        turns = [self.turns[turn_id]] if turn_id in self.turns else []
        if turn_id is None:
            turns = list(self.turns.values())
        out: list[FileChange] = []
        for turn in turns:
            if path is not None and path not in turn.files:
                continue
            out += [c for c in self.hunks_of(turn) if path is None or c.path == path]
        return out

    # -- where they are -------------------------------------------------------------------

    async def locate(self, editor: Editor, path: Path) -> tuple[str | None, list[Located]]:
        """The file's text now (None: it does not exist) and its hunks of every turn in it;
        states the user changed in the editor itself are taken in (and published)."""
        current = await _read(editor, path)
        await self.prepare(self._about(None, path))
        changes = self.files(path=path)
        if len(current or "") > BIG_TEXT or any(c.big for c in changes):
            await self._diff_off_loop(changes, current or "")
        located: list[Located] = []
        moved: dict[tuple[str, HunkState], list[Hunk]] = {}
        for change in changes:
            for hunk in change.hunks:
                found, new_state = self._find_in(change, hunk, current or "")
                if new_state is not None:
                    hunk.state, hunk.last_turn = new_state, self.last_turn
                    moved.setdefault((hunk.turn_id, new_state), []).append(hunk)
                    if new_state == "undone":
                        self.unnoted[hunk.hunk_id] = found.lines if found else None
                    else:
                        self.unnoted.pop(hunk.hunk_id, None)
                    found = self._find_in(change, hunk, current or "")[0]
                located.append(found or Located(hunk, None, conflict=hunk.state != "undone"))
        for (turn_id, state), hunks in moved.items():
            self.record_state(turn_id, path, hunks, state)
        if moved:
            self._changed([t for t, _ in moved], [path])
        located.sort(key=lambda x: (x.lines is None, (x.lines or x.hunk.new_range)[0]))
        return current, [_with_tail(x, current) for x in located]

    def locate_in(self, path: Path, text: str) -> list[Located]:
        """Where the hunks in ``path`` are in ``text`` (the file on disk, when a buffer holds
        other text), changing no state: a hunk's own lines, else ``lines`` None with
        ``conflict`` False when its lines before the turn are there instead."""
        located: list[Located] = []
        for change in self.files(path=path):
            for hunk in change.hunks:
                at = follow(change.diff_to(text).opcodes, *hunk.new_range)
                if at is not None:
                    located.append(_with_tail(Located(hunk, at), text))
                    continue
                back = follow(change.diff_to(text, from_before=True).opcodes, *hunk.old_range)
                located.append(Located(hunk, None, conflict=back is None))
        return located

    async def listing(
        self, editor: Editor, turn_id: str | None = None, path: Path | None = None
    ) -> list[FileListing]:
        """The changed files (of one turn, or one file) with their hunks as they are now."""
        if turn_id is not None and self.checkpoints.find(turn_id) is None:
            raise SessionError(f"unknown turnId for this session: {turn_id}")
        await self.prepare(self._about(turn_id, path))
        out: list[FileListing] = []
        paths = list(dict.fromkeys(c.path for c in self.files(turn_id, path)))
        for where in paths:
            try:
                _current, located = await self.locate(editor, where)
            except SessionError as e:
                log.info("listing changes: %s", e)
                located = [
                    Located(h, None, conflict=h.state != "undone")
                    for c in self.files(path=where)
                    for h in c.hunks
                ]
            untracked = [c for c in self.files(turn_id, where) if c.problem is not None]
            mine = [x for x in located if turn_id in (None, x.hunk.turn_id)]
            out.append(FileListing(where, mine, untracked))
        return out

    async def _diff_off_loop(self, changes: list[FileChange], current: str) -> None:
        """The diffs ``_find_in`` will need, made in a thread: from each turn's text after,
        and from its text before where a hunk is undone or is not where it was."""
        for change in changes:
            after = await asyncio.to_thread(change.diff_to, current)
            if any(
                h.state == "undone"
                or (
                    h.state == "pending"
                    and not change.shell
                    and follow(after.opcodes, *h.new_range) is None
                )
                for h in change.hunks
            ):
                await asyncio.to_thread(change.diff_to, current, from_before=True)

    def _find_in(
        self, change: FileChange, hunk: Hunk, current: str
    ) -> tuple[Located | None, HunkState | None]:
        """Where ``hunk`` is in ``current`` (None: nowhere), and the state the text says it
        is in when that is not its recorded one."""
        at = follow(change.diff_to(current).opcodes, *hunk.new_range)
        if hunk.state == "undone":
            if at is not None and not self.settled(hunk.path, hunk.last_turn):
                return Located(hunk, at), "pending"  # brought back (the editor's undo)
            back = follow(change.diff_to(current, from_before=True).opcodes, *hunk.old_range)
            return (Located(hunk, back) if back is not None else None), None
        if at is not None:
            return Located(hunk, at), None
        if (
            hunk.state == "pending"
            and not change.shell
            and not self.settled(hunk.path, hunk.turn_id)
        ):
            back = follow(change.diff_to(current, from_before=True).opcodes, *hunk.old_range)
            if back is not None:
                return Located(hunk, back), "undone"  # undone by hand in the editor
        return None, None

    def settled(self, path: Path, since: str | None) -> bool:
        """Whether a turn after ``since`` (or any, for None) changed ``path``: then its text
        no longer tells what the user did to the hunks before."""
        turns = self.checkpoints.turns
        start = self.checkpoints.find(since) if since is not None else -1
        if start is None:
            return True
        return any(path in t.before or path in t.missing for t in turns[start + 1 :])

    @property
    def last_turn(self) -> str | None:
        turns = self.checkpoints.turns
        return turns[-1].turn_id if turns else None

    # -- states ---------------------------------------------------------------------------

    def keep(self, selection: Selection) -> Outcome:
        outcome = Outcome()
        for hunk in self.select(selection):
            if hunk.state == "undone":
                reason = "it was undone; the editor's own undo brings it back"
                outcome.refused.append(Refusal(hunk, reason))
            else:
                outcome.done.append(hunk)
        self.set_state(outcome.done, "kept")
        return outcome

    def set_state(self, hunks: Sequence[Hunk], state: HunkState) -> None:
        """Record a state the user chose, and say the change set changed."""
        changed = [h for h in hunks if h.state != state]
        groups: dict[tuple[str, Path], list[Hunk]] = {}
        for hunk in changed:
            hunk.state, hunk.last_turn = state, self.last_turn
            groups.setdefault((hunk.turn_id, hunk.path), []).append(hunk)
        for (turn_id, path), group in groups.items():
            self.record_state(turn_id, path, group, state)
        if changed:
            self._changed([t for t, _ in groups], [p for _, p in groups])

    def record_state(self, turn_id: str, path: Path, hunks: list[Hunk], state: HunkState) -> None:
        data = HunkStateData(
            turn_id=turn_id,
            path=str(path),
            hunk_ids=[h.hunk_id for h in hunks],
            state=state,
            last_turn=self.last_turn,
        )
        self._record(ProgressRecord(session_id=self._session_id, turn_id=turn_id, data=data))

    def noted(self, hunk_ids: list[str]) -> None:
        for hunk_id in hunk_ids:
            self.unnoted.pop(hunk_id, None)
        data = UndoNotedData(hunk_ids=hunk_ids)
        self._record(ProgressRecord(session_id=self._session_id, data=data))

    # -- a resumed session ----------------------------------------------------------------


async def _read(editor: Editor, path: Path) -> str | None:
    try:
        return (await editor.read(path)).text
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SessionError(f"{path} cannot be read: {e}")


async def _read_disk(path: Path) -> tuple[str | None, str | None]:
    try:
        return await asyncio.to_thread(read_text_file, path), None
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as e:
        return None, f"its text after the turn could not be read: {e}"


def _with_tail(located: Located, current: str | None) -> Located:
    if located.lines is None or not current or current.endswith(("\n", "\r")):
        return located
    lines = split_lines(current)
    if located.lines[1] < len(lines):
        return located
    return Located(located.hunk, located.lines, located.conflict, lines[-1])
