"""Edit: every refusal, the re-match paths (stale read, user typing), and what it reports."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.editor.port import Conflict, Document, Unconfirmed, WriteOutcome
from tether.protocol.content import DiffContent
from tether.tools.base import ToolResult
from tether.tools.context import FileState, ToolContext
from tether.tools.edit import EDIT_TOOL
from tether.tools.read import READ_TOOL

Run = Callable[..., Awaitable[ToolResult]]
CODE = "def greet():\n    print('hi')\n\n\ndef part():\n    print('bye')\n"


@pytest.fixture
async def code_file(run: Run, workspace: Path) -> Path:
    f = workspace / "m.py"
    f.write_text(CODE)
    await run(READ_TOOL, {"file_path": str(f)})
    return f


def edit(path: Path, old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {"file_path": str(path), "old_string": old, "new_string": new, **extra}


async def test_unique_edit_reports_a_snippet(run: Run, ctx: ToolContext, code_file: Path) -> None:
    result = await run(EDIT_TOOL, edit(code_file, "print('hi')", "print('hello')"))
    assert not result.is_error
    text = str(result.content)
    assert text.startswith(f"The file {code_file} has been updated.")
    assert "2\t    print('hello')" in text
    assert code_file.read_text() == CODE.replace("'hi'", "'hello'")
    (diff,) = result.display
    assert isinstance(diff, DiffContent) and diff.old_text == CODE
    # The record follows our write, so a second edit needs no re-read.
    again = await run(EDIT_TOOL, edit(code_file, "print('bye')", "print('ciao')"))
    assert not again.is_error and "Note:" not in str(again.content)


@pytest.mark.parametrize(
    ("old", "new", "extra", "expected"),
    [
        ("print('hi')", "print('hi')", {}, "No changes to make"),  # 1
        ("absent", "x", {}, "was not found"),  # 8
        ("print", "echo", {}, "occurs 2 times, but replace_all is false"),  # 9
        ("", "new content", {}, "already exists and is not empty"),  # 3
    ],
)
async def test_refusals(
    run: Run, code_file: Path, old: str, new: str, extra: dict[str, Any], expected: str
) -> None:
    result = await run(EDIT_TOOL, edit(code_file, old, new, **extra))
    assert result.is_error and expected in str(result.content)
    assert code_file.read_text() == CODE


async def test_not_found_quotes_the_string(run: Run, code_file: Path) -> None:
    result = await run(EDIT_TOOL, edit(code_file, "nope\nnada", "x"))
    assert "String: nope\nnada" in str(result.content)


async def test_missing_file_notebook_and_unread(run: Run, workspace: Path) -> None:
    missing = await run(EDIT_TOOL, edit(workspace / "gone.py", "a", "b"))  # 4
    assert missing.is_error and "does not exist" in str(missing.content)
    nb = workspace / "n.ipynb"
    nb.write_text("{}")
    notebook = await run(EDIT_TOOL, edit(nb, "{", "["))  # 5
    assert notebook.is_error and "NotebookEdit" in str(notebook.content)
    unread = workspace / "u.py"
    unread.write_text("x = 1\n")
    result = await run(EDIT_TOOL, edit(unread, "1", "2"))  # 6
    assert result.is_error and "has not been read" in str(result.content)
    assert unread.read_text() == "x = 1\n"


async def test_empty_old_string_creates_missing_or_empty_file(run: Run, workspace: Path) -> None:
    created = workspace / "pkg" / "new.py"
    result = await run(EDIT_TOOL, edit(created, "", "x = 1\n"))
    assert not result.is_error and created.read_text() == "x = 1\n"
    assert str(result.content).startswith(f"File created successfully at: {created}")
    empty = workspace / "empty.py"
    empty.write_text("")
    filled = await run(EDIT_TOOL, edit(empty, "", "y = 2\n"))
    assert not filled.is_error and empty.read_text() == "y = 2\n"


async def test_replace_all_reports_the_count(run: Run, code_file: Path) -> None:
    result = await run(EDIT_TOOL, edit(code_file, "print", "log", replace_all=True))
    assert not result.is_error and "all 2 occurrences replaced" in str(result.content)
    assert code_file.read_text().count("log(") == 2


async def test_crlf_file_matched_with_lf_and_kept_crlf(run: Run, workspace: Path) -> None:
    f = workspace / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await run(READ_TOOL, {"file_path": str(f)})
    result = await run(EDIT_TOOL, edit(f, "one\ntwo", "1\n2"))
    assert not result.is_error
    assert f.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_curly_quotes_tolerated(run: Run, workspace: Path) -> None:
    f = workspace / "doc.md"
    f.write_text("He said “stop” twice.\n")
    await run(READ_TOOL, {"file_path": str(f)})
    result = await run(EDIT_TOOL, edit(f, 'said "stop"', 'said "go"'))
    assert not result.is_error and "curly and straight quotes" in str(result.content)
    assert f.read_text() == "He said “go” twice.\n"


async def test_stale_read_rematches_when_unique(run: Run, code_file: Path) -> None:
    code_file.write_text("# header added by the user\n" + CODE)
    result = await run(EDIT_TOOL, edit(code_file, "print('bye')", "print('ciao')"))
    assert not result.is_error
    assert "changed since you last read it" in str(result.content)
    assert code_file.read_text() == "# header added by the user\n" + CODE.replace("bye", "ciao")


@pytest.mark.parametrize("user_text", ["print('bye')\n" + CODE, CODE.replace("bye", "adios")])
async def test_stale_read_fails_when_no_longer_unique(
    run: Run, code_file: Path, user_text: str
) -> None:
    code_file.write_text(user_text)
    result = await run(EDIT_TOOL, edit(code_file, "print('bye')", "print('ciao')"))
    assert result.is_error
    assert "changed since you read it" in str(result.content)
    assert "Read the file again" in str(result.content)
    assert code_file.read_text() == user_text


class UserTypesOnce(DiskEditor):
    """The first write loses a race with the user, who edits another part of the file."""

    def __init__(self, user_edit: Callable[[str], str], times: int = 1) -> None:
        super().__init__()
        self.user_edit = user_edit
        self.conflicts_left = times
        self.writes = 0

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        self.writes += 1
        if self.conflicts_left:
            self.conflicts_left -= 1
            typed = self.user_edit(path.read_text())
            path.write_text(typed)
            return Conflict(Document(path=path, text=typed), "the buffer changed")
        return await super().write(path, new_text, base=base, label=label)


async def test_conflict_rematches_and_keeps_user_text(
    run: Run, ctx: ToolContext, code_file: Path
) -> None:
    editor = UserTypesOnce(lambda text: text + "# typed by the user\n")
    ctx.editor = editor
    result = await run(EDIT_TOOL, edit(code_file, "print('hi')", "print('hello')"))
    assert not result.is_error, result.content
    assert "matched again" in str(result.content)
    assert code_file.read_text() == CODE.replace("'hi'", "'hello'") + "# typed by the user\n"
    assert editor.writes == 2


async def test_conflict_that_breaks_the_match_fails(
    run: Run, ctx: ToolContext, code_file: Path
) -> None:
    ctx.editor = UserTypesOnce(lambda text: text.replace("print('hi')", "print('HI')"))
    result = await run(EDIT_TOOL, edit(code_file, "print('hi')", "print('hello')"))
    assert result.is_error and "no longer occurs" in str(result.content)
    assert "print('HI')" in code_file.read_text()


async def test_endless_conflicts_give_up_without_writing(
    run: Run, ctx: ToolContext, code_file: Path
) -> None:
    editor = UserTypesOnce(lambda text: text + "#\n", times=100)
    ctx.editor = editor
    result = await run(EDIT_TOOL, edit(code_file, "print('hi')", "print('hello')"))
    assert result.is_error and "kept changing" in str(result.content)
    assert editor.writes == 4
    assert "print('hi')" in code_file.read_text()


async def test_permission_check_shows_the_prospective_diff(
    ctx: ToolContext, code_file: Path
) -> None:
    inp = EDIT_TOOL.input_model(**edit(code_file, "print('hi')", "print('yo')"))
    check = await EDIT_TOOL.check_permissions(inp, ctx)
    assert check.behavior == "passthrough"
    (diff,) = check.content
    assert isinstance(diff, DiffContent) and diff.new_text == CODE.replace("'hi'", "'yo'")
    bad = EDIT_TOOL.input_model(**edit(code_file, "nothing", "x"))
    assert (await EDIT_TOOL.check_permissions(bad, ctx)).content == []
    assert await EDIT_TOOL.validate(bad, ctx) is not None
    assert await EDIT_TOOL.validate(inp, ctx) is None
    assert code_file.read_text() == CODE


class QuietEditor(DiskEditor):
    """Writes the file, then reports the outcome as unknown (the editor never showed it)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        self.writes += 1
        await super().write(path, new_text, base=base, label=label)
        return Unconfirmed(Document(path=path, text=new_text), "the editor went quiet")


async def test_unconfirmed_edit_is_reported_and_requires_a_reread(
    run: Run, ctx: ToolContext, code_file: Path
) -> None:
    ctx.editor = QuietEditor()
    result = await run(EDIT_TOOL, edit(code_file, "print('hi')", "print('hello')"))
    assert not result.is_error
    assert "may or may not have been applied: the editor went quiet" in str(result.content)
    (diff,) = result.display
    assert isinstance(diff, DiffContent) and diff.new_text == CODE.replace("'hi'", "'hello'")
    again = await run(EDIT_TOOL, edit(code_file, "print('bye')", "print('ciao')"))
    assert again.is_error and "could not be confirmed" in str(again.content)
    assert ctx.editor.writes == 1
    await run(READ_TOOL, {"file_path": str(code_file)})
    after_read = await run(EDIT_TOOL, edit(code_file, "print('bye')", "print('ciao')"))
    assert not after_read.is_error and ctx.editor.writes == 2


async def test_unconfirmed_marks_survive_a_snapshot(ctx: ToolContext, code_file: Path) -> None:
    ctx.files.mark_unconfirmed(code_file)
    restored = FileState()
    restored.restore(ctx.files.snapshot())
    record = restored.get(code_file)
    assert record is not None and record.unconfirmed


class RefusesUnchanged(DiskEditor):
    """The editor refuses the edit and its buffer stays exactly as it was (a user's "no")."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        self.writes += 1
        return Conflict(base, "the user declined the edit")


async def test_a_refusal_with_nothing_moved_is_not_resent(
    run: Run, ctx: ToolContext, code_file: Path
) -> None:
    editor = RefusesUnchanged()
    ctx.editor = editor
    result = await run(EDIT_TOOL, edit(code_file, "print('hi')", "print('hello')"))
    assert result.is_error and "the user declined the edit" in str(result.content)
    assert editor.writes == 1 and code_file.read_text() == CODE
