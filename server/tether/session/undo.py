"""Undoing hunks: the lines go back to what they were before the turn, in the editor's
buffer and on disk.

All the chosen hunks of one file become one write through the editor (one versioned
``workspace/applyEdit`` labelled "Tether: undo change" for an LSP client), computed on the
text the user has now: only the hunks' own lines are replaced, so the user's unsaved text
elsewhere stays, and the editor's undo can take the undo back. When a buffer holds the file,
the edit goes to the buffer alone and the hunks are put back in the file on disk separately,
so the user's unsaved text stays unsaved (not written with the undo); where the disk's lines
are not the turn's, the disk is left as it is and the outcome says so. A hunk the user took
back by hand in the buffer is put back on disk the same way. The edit is based on the text
it was computed on; when the user typed in between, the hunks are found again on the new text
and the edit recomputed (a few times at most). A hunk whose lines changed since the turn made
them is a conflict: it is reported, never merged.

A file the turn created goes away once all its lines are undone (as ``tether/rewind`` does);
a file the turn removed comes back.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tether.editor.disk import read_text_file, write_text_atomically
from tether.editor.port import Conflict, Document, Editor, buffer_only_writer
from tether.errors import SessionError
from tether.session.change_model import Hunk, Located, Outcome, Refusal, Selection
from tether.session.changes import ChangeSet
from tether.session.hunks import split_lines

UNDO_LABEL = "Tether: undo change"
ATTEMPTS = 3
CONFLICT = (
    "its lines were changed after the turn made them (by you or a later turn); undo the later "
    "change first, or edit the lines by hand"
)


async def undo_hunks(changes: ChangeSet, editor: Editor, selection: Selection) -> Outcome:
    await changes.prepare_for(selection)
    outcome = Outcome()
    by_path: dict[Path, list[Hunk]] = {}
    for hunk in changes.select(selection):
        if hunk.state == "undone":
            outcome.done.append(hunk)  # already: nothing to do
        else:
            by_path.setdefault(hunk.path, []).append(hunk)
    for path, hunks in by_path.items():
        await _undo_in_file(changes, editor, path, hunks, outcome)
    return outcome


async def _undo_in_file(
    changes: ChangeSet, editor: Editor, path: Path, hunks: list[Hunk], outcome: Outcome
) -> None:
    wanted = {h.hunk_id for h in hunks}
    problem = "the file kept changing while the change was being undone"
    for _ in range(ATTEMPTS):
        try:
            current, located = await changes.locate(editor, path)
        except SessionError as e:
            outcome.refused += [Refusal(h, str(e)) for h in hunks]
            return
        ready: list[Located] = []
        refused: list[Refusal] = []
        already: list[Hunk] = []
        for found in located:
            if found.hunk.hunk_id not in wanted:
                continue
            if found.hunk.state == "undone":
                already.append(found.hunk)  # the user did it in the editor meanwhile
            elif found.lines is None:
                refused.append(Refusal(found.hunk, CONFLICT, conflict=True))
            elif ready and found.lines[0] < ready[-1].lines[1]:  # type: ignore[index]
                reason = "it overlaps another change undone with it; undo them one at a time"
                refused.append(Refusal(found.hunk, reason))
            else:
                ready.append(found)
        if not ready:
            await _revert_on_disk(changes, editor, path, already, outcome)
            outcome.done += already
            outcome.refused += refused
            return
        new_text, places = _reverted(current or "", ready)
        base = Document(path=path, text=current) if current is not None else None
        writer = buffer_only_writer(editor)
        written = None
        if writer is not None and base is not None and await _disk_text(path) != current:
            written = await writer.write_buffer_only(path, new_text, base=base, label=UNDO_LABEL)
        in_buffer = written is not None
        if written is None:
            written = await editor.write(path, new_text, base=base, label=UNDO_LABEL)
        if isinstance(written, Conflict):
            problem = f"the file kept changing while the change was being undone: {written.reason}"
            continue
        done = [x.hunk for x in ready]
        changes.set_state(done, "undone")
        for hunk, place in zip(done, places, strict=True):
            changes.unnoted[hunk.hunk_id] = place
        if not new_text and _created_by(changes, done):
            await asyncio.to_thread(path.unlink, missing_ok=True)
        elif in_buffer:
            await _revert_on_disk(changes, editor, path, done + already, outcome)
        else:
            await _revert_on_disk(changes, editor, path, already, outcome)
        outcome.done += already + done
        outcome.refused += refused
        return
    outcome.refused += [Refusal(h, problem) for h in hunks]


async def _disk_text(path: Path) -> str | None:
    try:
        return await asyncio.to_thread(read_text_file, path)
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return None


async def _revert_on_disk(
    changes: ChangeSet, editor: Editor, path: Path, hunks: list[Hunk], outcome: Outcome
) -> None:
    """Put ``hunks``' lines back in the file on disk, when a buffer holds other text (the
    user's unsaved lines, which stay unsaved). Where the disk does not have a hunk's lines
    as the turn made them, the disk is left as it is, and ``outcome`` says so."""
    if not hunks or buffer_only_writer(editor) is None:
        return
    disk = await _disk_text(path)
    if disk is None:
        return
    wanted = {h.hunk_id for h in hunks}
    ready: list[Located] = []
    differs: list[Hunk] = []
    for found in sorted(
        (x for x in changes.locate_in(path, disk) if x.hunk.hunk_id in wanted),
        key=lambda x: (x.lines or (-1, -1))[0],
    ):
        if found.lines is not None and (not ready or found.lines[0] >= ready[-1].lines[1]):  # type: ignore[index]
            ready.append(found)
        elif found.lines is not None or found.conflict:
            differs.append(found.hunk)
    if ready:
        text, _ = _reverted(disk, ready)
        await asyncio.to_thread(write_text_atomically, path, text)
    for hunk in differs:
        line = hunk.new_range[0] + 1
        outcome.notes.append(
            f"{path.name}: the change at line {line} is undone in the editor; the file on disk "
            "has other lines there and was left as it is (save the buffer to write it)"
        )


def _reverted(current: str, ready: list[Located]) -> tuple[str, list[tuple[int, int]]]:
    """``current`` with each hunk's lines back to what they were, and where those lines are
    in the result."""
    lines = split_lines(current)
    out: list[str] = []
    places: list[tuple[int, int]] = []
    at = 0
    for found in ready:
        assert found.lines is not None
        start, end = found.lines
        out += lines[at:start]
        places.append((len(out), len(out) + len(found.hunk.block.old)))
        out += found.hunk.block.old  # the same lines, line breaks and all
        at = end
    out += lines[at:]
    return "".join(out), places


def _created_by(changes: ChangeSet, hunks: list[Hunk]) -> bool:
    """Whether one of ``hunks`` is of a turn that created the file."""
    for hunk in hunks:
        turn = changes.turns.get(hunk.turn_id)
        change = turn.files.get(hunk.path) if turn is not None else None
        if change is not None and change.before is None:
            return True
    return False
