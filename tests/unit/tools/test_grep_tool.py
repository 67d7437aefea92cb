"""Grep: ripgrep and the pure-Python fallback must give identical answers.

Every query runs through the tool twice on the same tree, once with ``rg`` and once with
``config.ripgrep = None``, and the rendered outputs must be equal.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.grep import GREP_TOOL, split_globs

Run = Callable[..., Awaitable[ToolResult]]
HAS_RG = shutil.which("rg") is not None

TREE: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\n!keep.log\n",
    ".ignore": "scratch.txt\n",
    ".env": "SECRET=foo\n",
    ".git/HEAD": "foo in git\n",
    "README.md": "# Foo project\n\nUse foo wisely.\nThe --verbose flag prints more.\n",
    "app.log": "foo in a log\n",
    "keep.log": "foo kept\n",
    "scratch.txt": "foo scratch\n",
    "build/out.py": "foo = 'built'\n",
    "src/main.py": (
        "import os\n"
        "\n"
        "def foo():\n"
        "    return 'foo'\n"
        "\n"
        "def bar():\n"
        "    x = foo()\n"
        "    return x\n"
        "\n"
        "# -flag handling and café CAFÉ\n"
    ),
    "src/util.js": "export function foo() {}\nconst bar = 1; // foo bar foo\n",
    "src/types.ts": "type Foo = { foo: number };\n",
    "src/gen/.gitignore": "*.gen.py\n",
    "src/gen/a.gen.py": "foo generated\n",
    "src/gen/b.py": "foo\nbar\nfoo\nbar\n",
    "win.txt": b"foo bar\r\nbaz bar\r\n",
    "bom.txt": b"\xef\xbb\xbffoo at start\n",
    "blob.bin": b"foo\x00binary\n",
    "wide.txt": "short foo\n" + "x" * 600 + " foo\n" + "y" * 700 + "\nfoo again\n",
    "numbers.txt": "abc 123\nno digits\n42\n",
    "same1.txt": "tie foo\n",
    "same2.txt": "tie foo\n",
    "no_newline.txt": "last foo",
    "deep/.gitignore": "/a/b/\n",
    "deep/a/b/c.py": "foo deep\n",
    "deep/x/a/b/d.py": "foo deeper\n",
    "vendor/.gitignore": "*\n!keep.py\n",
    "vendor/keep.py": "foo keep\n",
    "vendor/drop.py": "foo drop\n",
    "Makefile": "foo:\n\techo foo\n",
    "multi.txt": "start\nmiddle\nend\nstart\nend\n",
}

QUERIES: list[dict[str, Any]] = [
    {"pattern": "foo"},
    {"pattern": "foo", "output_mode": "content"},
    {"pattern": "foo", "output_mode": "count"},
    {"pattern": "FOO", "-i": True, "output_mode": "content"},
    {"pattern": "café", "-i": True, "output_mode": "content"},
    {"pattern": "foo", "output_mode": "content", "-n": False},
    {"pattern": "foo", "output_mode": "content", "-A": 1},
    {"pattern": "return", "output_mode": "content", "-B": 2},
    {"pattern": "bar", "output_mode": "content", "-C": 1, "-A": 5},
    {"pattern": "foo", "glob": "*.py"},
    {"pattern": "foo", "glob": "*.{js,ts}", "output_mode": "content"},
    {"pattern": "foo", "glob": "!*.md,!*.txt"},
    {"pattern": "foo", "glob": "*.log"},
    {"pattern": "foo", "type": "py", "output_mode": "count"},
    {"pattern": "foo", "type": "js"},
    {"pattern": "foo", "type": "md", "glob": "*.txt"},
    {"pattern": "foo", "head_limit": 2},
    {"pattern": "foo", "output_mode": "content", "head_limit": 3, "offset": 1},
    {"pattern": "foo", "output_mode": "count", "offset": 2},
    {"pattern": r"def \w+\(\):\n\s+return", "multiline": True, "output_mode": "content"},
    {"pattern": "foo.bar", "multiline": True, "output_mode": "count"},
    {"pattern": "o", "multiline": True, "output_mode": "count"},
    {"pattern": "-flag", "output_mode": "content"},
    {"pattern": "--verbose"},
    {"pattern": "foo", "path": "src", "output_mode": "content"},
    {"pattern": "foo", "path": "app.log", "output_mode": "content"},
    {"pattern": r"\bfoo\b", "output_mode": "count"},
    {"pattern": "bar$", "output_mode": "content"},
    {"pattern": "^[[:digit:]]+$", "output_mode": "content"},
    {"pattern": "^foo", "output_mode": "content"},
    {"pattern": "", "output_mode": "count", "path": "src"},
    {"pattern": "foo", "glob": "src/*.py"},
    {"pattern": "foo", "glob": "**/b/*"},
    {"pattern": "foo", "glob": "!src/**"},
    {"pattern": "foo", "type": "make", "output_mode": "content"},
    {"pattern": "start.*?end", "multiline": True, "output_mode": "content", "-A": 1},
    {"pattern": "start.*end", "multiline": True, "output_mode": "count"},
    {"pattern": "foo", "path": "vendor"},
    {"pattern": "foo", "path": "deep", "output_mode": "content"},
    {"pattern": "zzz-no-such-thing"},
    {"pattern": "zzz-no-such-thing", "output_mode": "content"},
]


@pytest.fixture
def tree(workspace: Path) -> Path:
    for i, (rel, body) in enumerate(sorted(TREE.items())):
        p = workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body)
        stamp = 1_700_000_000 if rel.startswith("same") else 1_600_000_000 + i * 10
        os.utime(p, (stamp, stamp))
    (workspace / "link.txt").symlink_to(workspace / "same1.txt")
    return workspace


@pytest.mark.skipif(not HAS_RG, reason="ripgrep is not installed")
@pytest.mark.parametrize("query", QUERIES, ids=[repr(q) for q in QUERIES])
async def test_ripgrep_and_python_agree(
    run: Run, ctx: ToolContext, tree: Path, query: dict[str, Any]
) -> None:
    with_rg = await run(GREP_TOOL, query)
    py_ctx = dataclasses.replace(ctx, config=dataclasses.replace(ctx.config, ripgrep=None))
    with_python = await run(GREP_TOOL, query, py_ctx)
    assert not with_rg.is_error, with_rg.content
    assert with_python.content == with_rg.content


@pytest.mark.skipif(not HAS_RG, reason="ripgrep is not installed")
async def test_answers_are_what_we_expect(run: Run, tree: Path) -> None:
    files = str((await run(GREP_TOOL, {"pattern": "foo"})).content).splitlines()
    assert files[0] == "Found 16 files"
    # Ties on mtime are ordered by path; newest first otherwise.
    assert files[1:3] == [str(tree / "same1.txt"), str(tree / "same2.txt")]
    names = {Path(f).name for f in files[1:]}
    assert ".env" in names and "keep.log" in names
    assert not names & {"app.log", "out.py", "a.gen.py", "HEAD", "blob.bin", "link.txt"}
    assert not names & {"c.py", "drop.py"} and {"d.py", "keep.py", "Makefile"} <= names
    assert "scratch.txt" not in names  # .ignore is honoured too
    content = str((await run(GREP_TOOL, {"pattern": "foo", "output_mode": "content"})).content)
    assert f"{tree / 'wide.txt'}:2:[Omitted long matching line]" in content
    assert f"{tree / 'src/main.py'}:3:def foo():" in content
    context = str(
        (await run(GREP_TOOL, {"pattern": "again", "output_mode": "content", "-B": 1})).content
    )
    assert context == (
        f"{tree / 'wide.txt'}-3-[Omitted long context line]\n{tree / 'wide.txt'}:4:foo again"
    )
    count = str((await run(GREP_TOOL, {"pattern": "foo", "output_mode": "count"})).content)
    assert count.endswith("Found 23 matching lines across 16 files.")


async def test_python_fallback_alone(run: Run, ctx: ToolContext, tree: Path) -> None:
    ctx.config.ripgrep = None
    result = await run(GREP_TOOL, {"pattern": "bar", "output_mode": "content", "path": "src/gen"})
    path = tree / "src/gen/b.py"
    assert result.content == f"{path}:2:bar\n{path}:4:bar"
    missing = await run(GREP_TOOL, {"pattern": "x", "type": "cobol"})
    assert missing.is_error and "Unknown file type" in str(missing.content)
    bad = await run(GREP_TOOL, {"pattern": "(unclosed"})
    assert bad.is_error and "Invalid regular expression" in str(bad.content)


async def test_missing_rg_binary_falls_back(run: Run, ctx: ToolContext, tree: Path) -> None:
    ctx.config.ripgrep = "definitely-not-ripgrep-xyz"
    result = await run(GREP_TOOL, {"pattern": "foo", "path": "src/gen"})
    assert result.content == f"Found 1 file\n{tree / 'src/gen/b.py'}"


@pytest.mark.skipif(not HAS_RG, reason="ripgrep is not installed")
async def test_output_is_capped_and_errors_are_reported(
    run: Run, ctx: ToolContext, tree: Path
) -> None:
    ctx.config.grep_max_chars = 200
    capped = str((await run(GREP_TOOL, {"pattern": ".", "output_mode": "content"})).content)
    assert "[Output cut at 200 characters" in capped
    assert len(capped.split("\n\n[Output cut")[0]) <= 200
    bad = await run(GREP_TOOL, {"pattern": "(unclosed"})
    assert bad.is_error and "ripgrep failed" in str(bad.content)
    nowhere = await run(GREP_TOOL, {"pattern": "x", "path": "nope"})
    assert nowhere.is_error and "does not exist" in str(nowhere.content)


def test_split_globs_and_schema() -> None:
    assert split_globs("*.py *.{ts,tsx}") == ("*.py", "*.{ts,tsx}")
    assert split_globs("*.js,*.jsx") == ("*.js", "*.jsx")
    props = GREP_TOOL.spec().input_schema["properties"]
    assert {"-A", "-B", "-C", "-n", "-i", "pattern", "output_mode"} <= set(props)
    inp = GREP_TOOL.input_model.model_validate({"pattern": "x", "-i": True, "-C": 2})
    assert inp.ignore_case and inp.context == 2
    assert GREP_TOOL.is_read_only(inp) and GREP_TOOL.kind == "search"


async def test_a_backtracking_pattern_without_ripgrep_never_stalls_the_daemon(
    run: Run, ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.tools.grep_worker as grep_worker

    (workspace / "data.txt").write_text("a" * 60 + "!\n")
    py_ctx = dataclasses.replace(ctx, config=dataclasses.replace(ctx.config, ripgrep=None))
    query = {"pattern": "(a+)+$", "path": "data.txt", "output_mode": "content"}
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.ensure_future(ticker())
    call = asyncio.ensure_future(run(GREP_TOOL, query, py_ctx))
    await asyncio.sleep(1.0)
    assert not call.done()
    assert ticks > 20, "the event loop stalled while the pattern ran"
    call.cancel()  # the turn is stopped: the search ends with it
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(call, 5)
    beat.cancel()
    monkeypatch.setattr(grep_worker, "TIMEOUT_S", 0.5)
    result = await asyncio.wait_for(run(GREP_TOOL, query, py_ctx), 10)
    assert result.is_error and "was stopped" in str(result.content)
    assert "(a+)+" in str(result.content) and "install ripgrep" in str(result.content)
