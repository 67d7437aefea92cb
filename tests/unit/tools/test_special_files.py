"""Files that are not regular files (FIFOs, sockets, devices) in the workspace: every tool
refuses them by name, at once, and no open ever waits. Also paths with NUL bytes, and Read
with an offset streaming the file from disk."""

from __future__ import annotations

import asyncio
import os
import random
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tether.core.files import NotARegularFileError, open_regular, read_regular
from tether.core.tool_threads import Stop
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext, text_hash
from tether.tools.edit import EDIT_TOOL
from tether.tools.edit_match import split_lines
from tether.tools.glob import GLOB_TOOL
from tether.tools.grep import GREP_TOOL
from tether.tools.notebook_edit import NOTEBOOK_EDIT_TOOL
from tether.tools.read import READ_TOOL
from tether.tools.read_lines import read_line_range
from tether.tools.write import WRITE_TOOL

Run = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def specials(workspace: Path) -> Iterator[dict[str, Path]]:
    """A FIFO and a socket under names tools would happily open."""
    fifo = workspace / "notes.txt"
    os.mkfifo(fifo)
    os.mkfifo(workspace / "pic.png")
    os.mkfifo(workspace / "book.ipynb")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(workspace / "app.sock"))
    try:
        yield {"fifo": fifo, "socket": workspace / "app.sock"}
    finally:
        sock.close()


async def bounded(call: Awaitable[ToolResult]) -> ToolResult:
    """A tool call that must end at once (a blocked open never would)."""
    return await asyncio.wait_for(call, 10)


@pytest.mark.parametrize(
    ("name", "kind"), [("notes.txt", "a FIFO (named pipe)"), ("app.sock", "a socket")]
)
async def test_read_refuses_a_special_file_naming_it(
    run: Run, specials: dict[str, Path], name: str, kind: str
) -> None:
    for extra in ({}, {"offset": 2, "limit": 3}):
        result = await bounded(run(READ_TOOL, {"file_path": name, **extra}))
        assert result.is_error and f"is {kind}, not a regular file" in str(result.content)


async def test_media_and_notebooks_that_are_fifos_are_refused(
    run: Run, specials: dict[str, Path]
) -> None:
    for name in ("pic.png", "book.ipynb"):
        result = await bounded(run(READ_TOOL, {"file_path": name}))
        assert result.is_error and "a FIFO (named pipe)" in str(result.content)


async def test_edit_write_and_notebook_edit_refuse_a_fifo(
    run: Run, specials: dict[str, Path], ctx: ToolContext
) -> None:
    fifo = specials["fifo"]
    edit = await bounded(
        run(EDIT_TOOL, {"file_path": str(fifo), "old_string": "a", "new_string": "b"})
    )
    assert edit.is_error
    write = await bounded(run(WRITE_TOOL, {"file_path": str(fifo), "content": "x"}))
    assert write.is_error and "a FIFO (named pipe)" in str(write.content)
    assert fifo.is_fifo()  # nothing replaced it
    book = await bounded(
        run(
            NOTEBOOK_EDIT_TOOL,
            {
                "notebook_path": "book.ipynb",
                "cell_id": "x",
                "new_source": "1",
                "edit_mode": "replace",
            },
        )
    )
    assert book.is_error


@pytest.mark.parametrize("ripgrep", ["rg", None])
async def test_grep_and_glob_pass_special_files_by(
    run: Run, specials: dict[str, Path], ctx: ToolContext, workspace: Path, ripgrep: str | None
) -> None:
    ctx.config.ripgrep = ripgrep
    (workspace / "real.txt").write_text("needle\n")
    if ripgrep is None:  # ripgrep itself opens ignore files and would wait on this one
        os.mkfifo(workspace / ".gitignore")  # the walk leaves it unread
    found = await bounded(run(GREP_TOOL, {"pattern": "needle"}))
    assert not found.is_error and "real.txt" in str(found.content)
    direct = await bounded(run(GREP_TOOL, {"pattern": "needle", "path": "notes.txt"}))
    assert direct.is_error and "a FIFO (named pipe)" in str(direct.content)
    listed = await bounded(run(GLOB_TOOL, {"pattern": "*.txt"}))
    assert "real.txt" in str(listed.content)


def test_a_nul_byte_in_a_path_is_refused_with_the_reason() -> None:
    for tool, field in ((READ_TOOL, "file_path"), (WRITE_TOOL, "file_path"), (GREP_TOOL, "path")):
        raw = {field: "a\x00b.txt", "content": "x", "pattern": "x"}
        keys = set(tool.input_model.model_fields)
        problem = tool.parse({k: v for k, v in raw.items() if k in keys})
        assert isinstance(problem, str) and field in problem and "NUL byte" in problem


def test_open_regular_never_waits_and_names_what_it_found(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFileError, match="a FIFO"):
        read_regular(fifo)
    with pytest.raises(NotARegularFileError, match="a character device"):
        read_regular(Path("/dev/zero"))
    with pytest.raises(IsADirectoryError):
        read_regular(tmp_path)
    # Created files are fine; a FIFO opened for writing without a reader fails at once.
    os.close(open_regular(tmp_path / "new", os.O_WRONLY | os.O_CREAT))
    with pytest.raises(NotARegularFileError):
        open_regular(fifo, os.O_WRONLY)


def test_the_streamed_range_is_exactly_what_splitting_the_whole_text_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.tools.read_lines as read_lines

    rng = random.Random(37)
    alphabet = ["a", "b", "\n", "\r", "\r\n", "é", "€", "𝄞", " ", "x" * 10]
    path = tmp_path / "f.txt"
    for _ in range(1500):
        monkeypatch.setattr(read_lines, "CHUNK_BYTES", rng.choice([1, 2, 3, 5, 64, 1 << 20]))
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        path.write_bytes((b"\xef\xbb\xbf" if rng.random() < 0.2 else b"") + text.encode())
        start, count, width = rng.randint(1, 12), rng.randint(1, 8), rng.randint(1, 6)
        # A file too large to edit is read no further than the range: uncounted, unhashed.
        hashed = rng.random() < 0.5
        limit = 1 << 20 if hashed else -1
        got = read_line_range(path, start, count, width, hash_limit=limit, stop=Stop())
        lines = split_lines(text)
        wanted = lines[start - 1 : start - 1 + count]
        assert got.lines == [line[:width] for line in wanted]
        assert got.cut == [max(0, len(line) - width) for line in wanted]
        if hashed:
            assert got.total == len(lines)
            assert got.hash == text_hash(text)
        else:
            assert got.hash is None
            assert got.total in (len(lines), None)
            assert got.total is not None or start - 1 + count <= len(lines)


async def test_read_with_an_offset_streams_and_edit_still_checks_the_whole_file(
    run: Run, ctx: ToolContext, workspace: Path
) -> None:
    big = workspace / "big.log"
    big.write_text("".join(f"line {i}\n" for i in range(1, 50_001)))
    result = await run(READ_TOOL, {"file_path": "big.log", "offset": 49_999, "limit": 5})
    assert result.content == "49999\tline 49999\n50000\tline 50000"
    record = ctx.files.get(big)
    assert record is not None and record.partial and record.hash == text_hash(big.read_text())
    edited = await run(
        EDIT_TOOL, {"file_path": "big.log", "old_string": "line 49999\n", "new_string": "x\n"}
    )
    assert not edited.is_error, edited.content
    bad = workspace / "latin1.txt"
    bad.write_bytes(b"caf\xe9\n" * 3)
    result = await run(READ_TOOL, {"file_path": "latin1.txt", "offset": 2})
    assert result.is_error and "not UTF-8" in str(result.content)
