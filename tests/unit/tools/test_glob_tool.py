"""Glob: pattern semantics, gitignore (nested, negated), .git skipped, newest first, cap."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.glob import GLOB_TOOL, glob_to_regex, split_static_prefix

Run = Callable[..., Awaitable[ToolResult]]


def make(root: Path, files: dict[str, str]) -> None:
    for i, (rel, text) in enumerate(sorted(files.items())):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        os.utime(p, (1_000_000 + i, 1_000_000 + i))


def lines(result: ToolResult) -> list[str]:
    assert isinstance(result.content, str)
    return result.content.splitlines()


@pytest.mark.parametrize(
    ("pattern", "path", "yes", "no"),
    [
        ("*.py", "a.py", ["a.py"], ["d/a.py", "a.pyc"]),
        ("**/*.py", "", ["a.py", "d/a.py", "d/e/f.py"], ["a.txt"]),
        ("src/**/*.ts", "", ["src/a.ts", "src/x/y/b.ts"], ["a.ts", "lib/src/a.ts"]),
        ("*.{ts,tsx}", "", ["a.ts", "a.tsx"], ["a.js", "d/a.ts"]),
        ("file?.[ch]", "", ["file1.c", "fileX.h"], ["file10.c", "file1.o"]),
        ("[!a]*.md", "", ["b.md"], ["a.md"]),
        ("**", "", ["a", "d/e/f"], []),
    ],
)
def test_glob_to_regex(pattern: str, path: str, yes: list[str], no: list[str]) -> None:
    rx = glob_to_regex(pattern)
    for p in yes:
        assert rx.match(p), (pattern, p)
    for p in no:
        assert not rx.match(p), (pattern, p)


def test_split_static_prefix() -> None:
    assert split_static_prefix("src/lib/**/*.py") == ("src/lib", "**/*.py")
    assert split_static_prefix("**/*.py") == ("", "**/*.py")
    assert split_static_prefix("/abs/dir/*.py") == ("/abs/dir", "*.py")
    assert split_static_prefix("README.md") == ("", "README.md")


async def test_gitignore_nested_and_negated(run: Run, workspace: Path) -> None:
    make(
        workspace,
        {
            ".gitignore": "build/\n*.log\n!keep.log\n",
            "a.py": "",
            "app.log": "",
            "keep.log": "",
            "build/out.py": "",
            "pkg/.gitignore": "gen_*.py\n",
            "pkg/gen_x.py": "",
            "pkg/mod.py": "",
            "other/gen_y.py": "",
            ".git/config.py": "",
            ".hidden/h.py": "",
        },
    )
    found = lines(await run(GLOB_TOOL, {"pattern": "**/*"}))
    rel = sorted(str(Path(p).relative_to(workspace)) for p in found)
    kept = [".gitignore", "a.py", "keep.log", "pkg/.gitignore", "pkg/mod.py", "other/gen_y.py"]
    assert rel == sorted([*kept, ".hidden/h.py"])


async def test_newest_first_absolute_and_path_param(run: Run, workspace: Path) -> None:
    make(workspace, {"sub/old.py": "", "sub/new.py": "", "top.py": ""})
    os.utime(workspace / "sub/new.py", (2_000_000, 2_000_000))
    os.utime(workspace / "sub/old.py", (1_500_000, 1_500_000))
    result = await run(GLOB_TOOL, {"pattern": "*.py", "path": "sub"})
    assert lines(result) == [str(workspace / "sub/new.py"), str(workspace / "sub/old.py")]
    via_prefix = await run(GLOB_TOOL, {"pattern": "sub/*.py"})
    assert lines(via_prefix) == lines(result)


async def test_cap_and_no_match(run: Run, ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {f"f{i:02}.txt": "" for i in range(12)})
    ctx.config.glob_max_results = 5
    out = lines(await run(GLOB_TOOL, {"pattern": "*.txt"}))
    assert out[:5] == [str(workspace / f"f{i:02}.txt") for i in (11, 10, 9, 8, 7)]
    assert "5 most recently modified of 12" in out[5]
    assert (await run(GLOB_TOOL, {"pattern": "*.nothing"})).content == "No files found"


async def test_errors_and_metadata(run: Run, ctx: ToolContext, workspace: Path) -> None:
    (workspace / "f.txt").write_text("")
    not_dir = await run(GLOB_TOOL, {"pattern": "*", "path": "f.txt"})
    assert not_dir.is_error and "not a directory" in str(not_dir.content)
    outside = await run(GLOB_TOOL, {"pattern": "*", "path": "/"})
    assert outside.is_error
    inp = GLOB_TOOL.input_model(pattern="*")
    assert GLOB_TOOL.is_read_only(inp) and GLOB_TOOL.is_concurrency_safe(inp)
    assert (await GLOB_TOOL.check_permissions(inp, ctx)).behavior == "allow"
    assert GLOB_TOOL.kind == "search"
