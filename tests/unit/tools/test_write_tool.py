"""Write: read-before-write, no clobbering, CRLF kept, parents created, diff shown."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from tether.editor.disk import DiskEditor
from tether.editor.port import Conflict, Document, Unconfirmed, WriteOutcome
from tether.protocol.content import DiffContent
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext, text_hash
from tether.tools.read import READ_TOOL
from tether.tools.write import WRITE_TOOL

Run = Callable[..., Awaitable[ToolResult]]


async def test_creates_new_file_with_parents(run: Run, ctx: ToolContext, workspace: Path) -> None:
    target = workspace / "deep" / "er" / "new.txt"
    result = await run(WRITE_TOOL, {"file_path": str(target), "content": "hello\n"})
    assert not result.is_error
    assert result.content == f"File created successfully at: {target}"
    assert target.read_text() == "hello\n"
    (diff,) = result.display
    assert isinstance(diff, DiffContent) and diff.old_text is None and diff.new_text == "hello\n"
    record = ctx.files.get(target)
    assert record is not None and record.hash == text_hash("hello\n")


async def test_existing_file_must_be_read_first(run: Run, workspace: Path) -> None:
    f = workspace / "a.txt"
    f.write_text("old\n")
    result = await run(WRITE_TOOL, {"file_path": str(f), "content": "new\n"})
    assert result.is_error and "has not been read" in str(result.content)
    assert f.read_text() == "old\n"


async def test_update_after_read_shows_changed_region(run: Run, workspace: Path) -> None:
    f = workspace / "a.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    await run(READ_TOOL, {"file_path": str(f)})
    new = f.read_text().replace("line 10\n", "LINE TEN\n")
    result = await run(WRITE_TOOL, {"file_path": str(f), "content": new})
    assert not result.is_error
    text = str(result.content)
    assert text.startswith(f"The file {f} has been updated.")
    assert "10\tLINE TEN" in text and "8\tline 8" in text and "1\tline 1\n" not in text
    assert f.read_text() == new
    # Consecutive writes need no re-read: the record follows our own write.
    again = await run(WRITE_TOOL, {"file_path": str(f), "content": "short\n"})
    assert not again.is_error and f.read_text() == "short\n"


async def test_changed_since_read_is_refused(run: Run, workspace: Path) -> None:
    f = workspace / "a.txt"
    f.write_text("v1\n")
    await run(READ_TOOL, {"file_path": str(f)})
    f.write_text("v2 by the user\n")
    result = await run(WRITE_TOOL, {"file_path": str(f), "content": "mine\n"})
    assert result.is_error and "changed since you last read it" in str(result.content)
    assert f.read_text() == "v2 by the user\n"


async def test_crlf_is_kept(run: Run, workspace: Path) -> None:
    f = workspace / "win.txt"
    f.write_bytes(b"a\r\nb\r\n")
    await run(READ_TOOL, {"file_path": str(f)})
    await run(WRITE_TOOL, {"file_path": str(f), "content": "x\ny\nz\n"})
    assert f.read_bytes() == b"x\r\ny\r\nz\r\n"


class TypingUser(DiskEditor):
    """The user types between our check and our write: the write sees a Conflict."""

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        path.write_text("user was here\n")
        return Conflict(Document(path=path, text="user was here\n"), "the buffer changed")


async def test_conflict_never_clobbers(run: Run, ctx: ToolContext, workspace: Path) -> None:
    f = workspace / "a.txt"
    f.write_text("v1\n")
    await run(READ_TOOL, {"file_path": str(f)})
    ctx.editor = TypingUser()
    result = await run(WRITE_TOOL, {"file_path": str(f), "content": "mine\n"})
    assert result.is_error and "Nothing was written" in str(result.content)
    assert f.read_text() == "user was here\n"


async def test_permission_check_carries_the_diff(ctx: ToolContext, workspace: Path) -> None:
    f = workspace / "a.txt"
    f.write_text("old\n")
    ctx.files.record(Document(path=f, text="old\n"))
    inp = WRITE_TOOL.input_model(file_path=str(f), content="new\n")
    check = await WRITE_TOOL.check_permissions(inp, ctx)
    assert check.behavior == "passthrough"
    (diff,) = check.content
    assert isinstance(diff, DiffContent) and (diff.old_text, diff.new_text) == ("old\n", "new\n")
    assert not WRITE_TOOL.is_read_only(inp) and WRITE_TOOL.kind == "edit"
    unread = WRITE_TOOL.input_model(file_path=str(workspace / "b.txt"), content="x")
    (workspace / "b.txt").write_text("y")
    assert await WRITE_TOOL.validate(unread, ctx) is not None


class QuietEditor(DiskEditor):
    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        await super().write(path, new_text, base=base, label=label)
        return Unconfirmed(Document(path=path, text=new_text), "the editor went quiet")


async def test_unconfirmed_write_is_reported_and_requires_a_reread(
    run: Run, ctx: ToolContext, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("old\n")
    await run(READ_TOOL, {"file_path": str(f)})
    ctx.editor = QuietEditor()
    result = await run(WRITE_TOOL, {"file_path": str(f), "content": "new\n"})
    assert not result.is_error and "may or may not have been applied" in str(result.content)
    again = await run(WRITE_TOOL, {"file_path": str(f), "content": "newer\n"})
    assert again.is_error and "could not be confirmed" in str(again.content)
    assert f.read_text() == "new\n"
