"""The change set: a turn's hunks, keeping and undoing them, what the text says the user did,
the note for the model, and the same states after a resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.editor.port import Document
from tether.errors import SessionError
from tether.protocol.updates import ChangesUpdate, SessionUpdate
from tether.session.change_model import Selection
from tether.session.changes import ChangeSet
from tether.session.changes_resume import restore
from tether.session.checkpoints import Checkpoints
from tether.session.undo import undo_hunks
from tether.session.undo_notes import UndoNotes
from tether.transcript.payloads import ChangeAfterData, HunkStateData, UndoNotedData
from tether.transcript.records import ProgressRecord

ORIGINAL = "".join(f"line {i}\n" for i in range(30))


def replace_line(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[line] = new
    return "".join(lines)


class Session:
    """A change set over real files, with turns made by hand the way the checkpointing
    editor and the session record them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.records: list[ProgressRecord] = []
        self.published: list[SessionUpdate] = []
        self.checkpoints = Checkpoints()
        self.changes = ChangeSet(self.checkpoints, "s", self.records.append, self.published.append)
        self.editor = DiskEditor()

    async def turn(self, turn_id: str, shell: bool = False, **writes: str | None) -> None:
        """A turn that leaves each file (relative path) with this text (None: removed),
        through the editor or (``shell``) with a command."""
        self.checkpoints.begin(turn_id, None)
        checkpoint = self.checkpoints.current
        assert checkpoint is not None
        for name, text in writes.items():
            path = self.root / name
            checkpoint.before[path] = path.read_text() if path.exists() else None
            if text is None:
                path.unlink()
            else:
                path.write_text(text)
                if not shell:
                    checkpoint.after[path] = text
        await self.changes.turn_ended(turn_id)

    def ids(self, turn_id: str) -> list[str]:
        return [h.hunk_id for c in self.changes.files(turn_id) for h in c.hunks]

    def restored(self) -> ChangeSet:
        """The change set a resumed session builds from the same records."""
        checkpoints = Checkpoints()
        for turn in self.checkpoints.turns:
            checkpoints.begin(turn.turn_id, None)
            assert checkpoints.current is not None
            checkpoints.current.before.update(turn.before)
        again = ChangeSet(checkpoints, "s", lambda _r: None, lambda _u: None)
        data = [r.data for r in self.records]
        restore(
            again,
            [d for d in data if isinstance(d, ChangeAfterData)],
            [d for d in data if isinstance(d, HunkStateData)],
            [d for d in data if isinstance(d, UndoNotedData)],
        )
        return again


@pytest.fixture
def session(tmp_path: Path) -> Session:
    (tmp_path / "app.py").write_text(ORIGINAL)
    return Session(tmp_path)


def three_hunks() -> str:
    text = replace_line(ORIGINAL, 3, "three\n")
    text = replace_line(text, 12, "twelve\n")
    return replace_line(text, 24, "twenty-four\n")


async def test_a_turn_s_changes_are_hunks_with_stable_ids(session: Session) -> None:
    await session.turn("t1", **{"app.py": three_hunks(), "new.txt": "hello\n"})
    assert session.ids("t1") == ["t1-1", "t1-2", "t1-3", "t1-4"]
    (update,) = session.published
    assert isinstance(update, ChangesUpdate) and update.turn_ids == ["t1"]
    assert len(update.uris) == 2
    _text, located = await session.changes.locate(session.editor, session.root / "app.py")
    assert [x.lines for x in located] == [(3, 4), (12, 13), (24, 25)]
    assert session.restored().find("t1-3").block.new == ("twenty-four\n",)


async def test_undo_one_hunk_after_a_later_turn_changed_another_part(session: Session) -> None:
    app = session.root / "app.py"
    await session.turn("t1", **{"app.py": three_hunks()})
    later = replace_line(three_hunks(), 0, "zero\nand a line more\n")
    await session.turn("t2", **{"app.py": later})
    app.write_text(later + "# typed by the user\n")
    outcome = await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-2",)))
    assert [h.hunk_id for h in outcome.done] == ["t1-2"] and not outcome.refused
    assert app.read_text() == replace_line(later, 13, "line 12\n") + "# typed by the user\n"
    assert session.changes.find("t1-2").state == "undone"
    assert session.changes.unnoted == {"t1-2": (13, 14)}
    _text, located = await session.changes.locate(session.editor, app)
    shown = {x.hunk.hunk_id: (x.hunk.state, x.lines, x.conflict) for x in located}
    assert shown == {
        "t2-1": ("pending", (0, 2), False),
        "t1-1": ("pending", (4, 5), False),
        "t1-2": ("undone", (13, 14), False),
        "t1-3": ("pending", (25, 26), False),
    }
    assert session.restored().find("t1-2").state == "undone"


async def test_a_hunk_whose_lines_changed_since_is_a_conflict(session: Session) -> None:
    app = session.root / "app.py"
    await session.turn("t1", **{"app.py": three_hunks()})
    await session.turn("t2", **{"app.py": replace_line(three_hunks(), 12, "TWELVE\n")})
    before = app.read_text()
    outcome = await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-2",)))
    (refusal,) = outcome.refused
    assert refusal.conflict and "changed after the turn made them" in refusal.reason
    assert app.read_text() == before  # nothing merged
    # Undoing the later change first frees the earlier one.
    await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t2-1",)))
    outcome = await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-2",)))
    assert [h.hunk_id for h in outcome.done] == ["t1-2"]
    assert app.read_text() == replace_line(three_hunks(), 12, "line 12\n")


async def test_keep_and_undo_all_of_a_file_or_turn(session: Session) -> None:
    await session.turn("t1", **{"app.py": three_hunks(), "new.txt": "hello\n"})
    kept = session.changes.keep(Selection(path=session.root / "app.py"))
    assert [h.hunk_id for h in kept.done] == ["t1-1", "t1-2", "t1-3"]
    # Undo all of the turn: only what is still pending (the new file), which goes away.
    outcome = await undo_hunks(session.changes, session.editor, Selection(turn_id="t1"))
    assert [h.hunk_id for h in outcome.done] == ["t1-4"]
    assert not (session.root / "new.txt").exists()
    # A kept hunk can still be undone by its id; an undone one cannot be kept.
    await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-1",)))
    refused = session.changes.keep(Selection(hunk_ids=("t1-1",))).refused
    assert refused and "undone" in refused[0].reason
    with pytest.raises(SessionError, match="unknown hunkId"):
        session.changes.keep(Selection(hunk_ids=("t1-99",)))
    with pytest.raises(SessionError, match="unknown turnId"):
        session.changes.keep(Selection(turn_id="nope"))
    with pytest.raises(SessionError, match="name the changes"):
        session.changes.keep(Selection())


async def test_a_removed_file_comes_back(session: Session) -> None:
    await session.turn("t1", **{"app.py": None})
    outcome = await undo_hunks(session.changes, session.editor, Selection(turn_id="t1"))
    assert len(outcome.done) == 1
    assert (session.root / "app.py").read_text() == ORIGINAL


async def test_what_the_user_did_in_the_editor_is_taken_in(session: Session) -> None:
    app = session.root / "app.py"
    await session.turn("t1", **{"app.py": three_hunks()})
    await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-1",)))
    undone = app.read_text()
    app.write_text(three_hunks())  # the editor's undo takes Tether's undo back
    await session.changes.locate(session.editor, app)
    assert session.changes.find("t1-1").state == "pending"
    assert "t1-1" not in session.changes.unnoted
    app.write_text(replace_line(undone, 24, "line 24\n"))  # the user reverts another by hand
    await session.changes.locate(session.editor, app)
    assert session.changes.find("t1-3").state == "undone"
    assert session.changes.find("t1-1").state == "undone"
    assert [r.data.state for r in session.records if isinstance(r.data, HunkStateData)] == [
        "undone",
        "pending",
        "undone",
    ]
    # A later turn that changes the file settles it: its text no longer tells.
    await session.turn("t2", **{"app.py": three_hunks()})
    await session.changes.locate(session.editor, app)
    assert session.changes.find("t1-3").state == "undone"


async def test_the_note_names_what_was_undone_once(session: Session) -> None:
    app = session.root / "app.py"
    await session.turn("t1", **{"app.py": three_hunks()})
    await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-2", "t1-3")))
    notes = UndoNotes(session.changes, session.editor, session.root)
    ((kind, message),) = await notes.take()
    assert kind == "changes_undone"
    text: Any = message.content[0]
    assert "- app.py line 13: you had replaced 1 line" in text.text
    assert '("line 12") with 1 ("twelve")' in text.text
    assert "- app.py line 25:" in text.text
    assert await notes.take() == []  # told once
    assert session.restored().unnoted == {}
    # Undone, then brought back before the prompt: nothing to tell.
    await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-1",)))
    app.write_text(replace_line(app.read_text(), 3, "three\n"))
    assert await notes.take() == []


class StaleBuffer(DiskEditor):
    """An editor whose buffer of a file still shows it as it was (Neovim does not reload a
    file a command changed until asked)."""

    def __init__(self, shown: dict[Path, str]) -> None:
        super().__init__()
        self.shown = shown

    async def read(self, path: Path) -> Document:
        if path in self.shown:
            return Document(path=path, text=self.shown[path], in_editor=True)
        return await super().read(path)


async def test_a_buffer_that_missed_a_command_s_change_is_not_an_undo(session: Session) -> None:
    app = session.root / "app.py"
    await session.turn("t1", shell=True, **{"app.py": three_hunks()})
    (change,) = session.changes.files("t1")
    assert change.shell and change.after == three_hunks()  # read from disk
    stale = StaleBuffer({app: ORIGINAL})
    _text, located = await session.changes.locate(stale, app)
    assert {(x.hunk.state, x.conflict) for x in located} == {("pending", True)}
    assert session.changes.unnoted == {}
    outcome = await undo_hunks(session.changes, stale, Selection(turn_id="t1"))
    assert not outcome.done and all(r.conflict for r in outcome.refused)
    # Once the buffer shows the file, the command's hunks are undone as any other.
    outcome = await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-2",)))
    assert [h.hunk_id for h in outcome.done] == ["t1-2"]
    assert session.restored().files("t1")[0].shell


async def test_a_rewind_drops_its_turns_and_the_text_tells_again(session: Session) -> None:
    app = session.root / "app.py"
    await session.turn("t1", **{"app.py": three_hunks()})
    before_t2 = app.read_text()
    await session.turn("t2", **{"new.txt": "x\n"})
    await undo_hunks(session.changes, session.editor, Selection(hunk_ids=("t1-1",)))
    # Rewinding t2 puts the files back as they were before it: t1-1's change is back.
    app.write_text(before_t2)
    session.checkpoints.drop_from("t2")
    session.changes.drop(["t2"])
    assert list(session.changes.turns) == ["t1"]
    await session.changes.locate(session.editor, app)
    assert session.changes.find("t1-1").state == "pending"
    assert session.changes.unnoted == {}  # nothing to tell the model any more
    assert session.restored().find("t1-1").state == "pending"
    with pytest.raises(SessionError, match="unknown hunkId"):
        session.changes.find("t2-1")
