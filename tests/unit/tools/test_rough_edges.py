"""Odd input every file tool meets sooner or later: a symlink loop, a path longer than the
system takes, a glob nested thousands deep, a huge or NUL-holding Grep pattern. Each gets an
error naming the cause, never an internal error."""

from __future__ import annotations

import asyncio
import errno
import io
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.core.hooks import NoHooks
from tether.core.messages import ToolUseBlock
from tether.orchestration.pipeline import ToolRuntime, run_tool_use
from tether.permissions.policy import RuleSet
from tether.tools.base import Tool, ToolResult
from tether.tools.context import ToolContext
from tether.tools.edit import EDIT_TOOL
from tether.tools.glob import GLOB_TOOL
from tether.tools.grep import GREP_TOOL
from tether.tools.notebook_edit import NOTEBOOK_EDIT_TOOL
from tether.tools.pool import ToolPool
from tether.tools.read import READ_TOOL
from tether.tools.write import WRITE_TOOL

Run = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def run(ctx: ToolContext) -> Run:
    """The call as the pipeline makes it (what the model reads back), without questions."""
    ctx.state.mode = "bypassPermissions"
    tools = ToolPool([READ_TOOL, WRITE_TOOL, EDIT_TOOL, GLOB_TOOL, GREP_TOOL, NOTEBOOK_EDIT_TOOL])

    async def run(
        tool: Tool[Any], raw: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        here = context or ctx
        rt = ToolRuntime("s", tools, RuleSet(), NoHooks(), lambda _i: here, lambda _k, _r: None)
        out = await run_tool_use(ToolUseBlock(id="t", name=tool.name, input=raw), rt)
        return ToolResult(content=out.block.text, is_error=out.failed)

    return run


def refused(result: ToolResult, *words: str) -> str:
    text = str(result.content)
    assert result.is_error, text
    assert "internal error" not in text.lower(), text
    for word in words:
        assert word in text, text
    return text


async def test_a_symlink_loop_is_named(run: Run, workspace: Path) -> None:
    os.symlink("loop_b", workspace / "loop_a")
    os.symlink("loop_a", workspace / "loop_b")
    for tool, inp in (
        (READ_TOOL, {"file_path": "loop_a"}),
        (READ_TOOL, {"file_path": "loop_a", "offset": 2}),
        (WRITE_TOOL, {"file_path": "loop_a", "content": "x"}),
        (EDIT_TOOL, {"file_path": "loop_a", "old_string": "a", "new_string": "b"}),
        (GREP_TOOL, {"pattern": "x", "path": "loop_a"}),
        (GLOB_TOOL, {"pattern": "*", "path": "loop_a"}),
    ):
        refused(await run(tool, inp))


@pytest.mark.parametrize("length", [300, 5000])
async def test_a_path_too_long_is_named(run: Run, ctx: ToolContext, length: int) -> None:
    name = "a" * length
    for tool, inp in (
        (READ_TOOL, {"file_path": name}),
        (WRITE_TOOL, {"file_path": name, "content": "x"}),
        (EDIT_TOOL, {"file_path": name, "old_string": "a", "new_string": "b"}),
        (GREP_TOOL, {"pattern": "x", "path": name}),
        (NOTEBOOK_EDIT_TOOL, {"notebook_path": name + ".ipynb", "new_source": "x"}),
    ):
        if isinstance(tool.parse(inp), str):  # refused as the model's input: it says why
            refused(await run(tool, inp), "longer than 4096 bytes")
            continue
        refused(await run(tool, inp), "too long")
    found = await run(GLOB_TOOL, {"pattern": name[:4000]})
    assert found.content == "No files found" or "longer than" in str(found.content)


async def test_glob_nested_thousands_deep_is_refused(run: Run, workspace: Path) -> None:
    (workspace / "a.py").write_text("")
    refused(await run(GLOB_TOOL, {"pattern": "{" * 3000}), "nested")
    refused(await run(GLOB_TOOL, {"pattern": "{a," * 1000 + "b" + "}" * 1000}), "nested")
    assert not (await run(GLOB_TOOL, {"pattern": "{a,b}.py"})).is_error


@pytest.mark.parametrize("ripgrep", ["rg", None])
async def test_grep_patterns_a_command_line_cannot_carry(
    run: Run, ctx: ToolContext, workspace: Path, ripgrep: str | None
) -> None:
    import dataclasses

    (workspace / "a.txt").write_bytes(b"one\x00two\nthree\n")
    cfg = dataclasses.replace(ctx.config, ripgrep=ripgrep)
    here = dataclasses.replace(ctx, config=cfg)
    refused(await run(GREP_TOOL, {"pattern": "x" * (1 << 20)}, here), "long")
    found = await run(GREP_TOOL, {"pattern": "one\x00two", "output_mode": "count"}, here)
    assert not found.is_error and "internal" not in str(found.content), found.content
    refused(await run(GREP_TOOL, {"pattern": "x", "glob": "*\x00"}, here), "NUL")
    if ripgrep is None:  # the fallback expands braces itself
        refused(await run(GREP_TOOL, {"pattern": "x", "glob": "{a,b}" * 12}, here), "1024")


async def test_a_full_disk_is_named_and_the_file_is_left_as_it_was(
    run: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace / "a.txt"
    target.write_text("original\n")
    assert not (await run(READ_TOOL, {"file_path": "a.txt"})).is_error
    real_fdopen = os.fdopen

    class Full(io.TextIOWrapper):
        def write(self, _text: str) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = real_fdopen(fd, mode, *args, **kwargs)
        if "w" in mode and "b" not in mode:
            return Full(f.detach(), encoding="utf-8", newline="")  # type: ignore[arg-type]
        return f

    monkeypatch.setattr(os, "fdopen", fdopen)
    for tool, inp in (
        (WRITE_TOOL, {"file_path": "a.txt", "content": "new\n"}),
        (EDIT_TOOL, {"file_path": "a.txt", "old_string": "original", "new_string": "new"}),
        (WRITE_TOOL, {"file_path": "b.txt", "content": "new\n"}),
    ):
        text = refused(await run(tool, inp), "the disk is full", "Nothing was written")
        assert ("as it was" in text) is (inp["file_path"] == "a.txt")
    monkeypatch.undo()
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt"]  # no temporary files


@pytest.mark.parametrize("name", [".gitignore", ".ignore", ".rgignore"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
async def test_an_ignore_file_that_never_ends_does_not_hang_ripgrep(
    run: Run, workspace: Path, name: str, kind: str
) -> None:
    assert shutil.which("rg"), "ripgrep is needed for this test"
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "a.txt").write_text("hello\n")
    (workspace / "b.txt").write_text("hello\n")
    if kind == "fifo":
        os.mkfifo(sub / name)
    else:
        os.symlink("/dev/zero", sub / name)
    found = await asyncio.wait_for(run(GLOB_TOOL, {"pattern": "**/*.txt"}), 20)
    assert sorted(str(found.content).splitlines()) == [str(workspace / "b.txt"), str(sub / "a.txt")]
    hits = await asyncio.wait_for(run(GREP_TOOL, {"pattern": "hello"}), 20)
    assert sorted(str(hits.content).splitlines()[1:]) == [
        str(workspace / "b.txt"),
        str(sub / "a.txt"),
    ], hits.content
