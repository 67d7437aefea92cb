"""Glob through ``rg --files`` and through the pure-Python walk: the same answers, in the
same order, on a tree with every kind of entry the two could disagree about."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import pytest

from tether.core.tool_threads import shared_pool
from tether.tools import glob_ripgrep
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.glob import GLOB_TOOL, WalkedFile, glob_walk

LANE = shared_pool().lane()

Run = Callable[..., Awaitable[ToolResult]]
HAS_RG = shutil.which("rg") is not None
pytestmark = pytest.mark.skipif(not HAS_RG, reason="ripgrep is not installed")

FILES = {
    ".gitignore": "build/\n*.log\n!keep.log\n/rooted.txt\n",
    ".ignore": "ignored_by_dot_ignore.py\n",
    "ignored_by_dot_ignore.py": "",
    "a.py": "",
    "app.log": "",
    "keep.log": "",
    "rooted.txt": "",
    "sub/rooted.txt": "",
    "build/out.py": "",
    "pkg/.gitignore": "gen_*.py\n!gen_keep.py\n",
    "pkg/gen_x.py": "",
    "pkg/gen_keep.py": "",
    "pkg/mod.py": "",
    "pkg/deep/er/x.txt": "",
    "other/gen_y.py": "",
    ".git/config": "",
    ".git/objects/ab/cd": "",
    "vendor/lib/.git": "gitdir: elsewhere\n",
    "vendor/lib/code.py": "",
    ".hidden/h.py": "",
    "naïve/ünïcode 文件.txt": "",
    "space dir/a file.md": "",
    "nested/repo/.git/HEAD": "",
    "nested/repo/.gitignore": "*.tmp\n",
    "nested/repo/x.tmp": "",
    "nested/repo/y.py": "",
}


def build(root: Path) -> None:
    for i, (rel, text) in enumerate(sorted(FILES.items())):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + 7 * (i % 5), 1_000_000 + 7 * (i % 5)))  # mtime ties
    (root / "link_to_file.py").symlink_to(root / "pkg" / "mod.py")
    (root / "link_to_dir").symlink_to(root / "pkg", target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "missing.py")
    (root / "loop").symlink_to(root, target_is_directory=True)
    os.mkfifo(root / "fifo.py")
    (root / os.fsdecode(b"bad-\xff-name.py")).write_text("")


@pytest.fixture
def tree(workspace: Path) -> Path:
    # An ignore file above the workspace applies too (no repository in between).
    (workspace.parent / ".gitignore").write_text("from_parent.py\n")
    (workspace / "from_parent.py").write_text("")
    build(workspace)
    return workspace


def rels(found: Sequence[glob_ripgrep.Listed | WalkedFile]) -> list[tuple[str, float]]:
    return sorted((f.rel, f.mtime) for f in found)


async def test_ripgrep_lists_what_the_walk_lists(tree: Path) -> None:
    listed = await glob_ripgrep.list_files("rg", tree, LANE)
    assert listed is not None, "ripgrep did not answer"
    walked = glob_walk(tree)
    assert rels(listed) == rels(walked)
    names = {f.rel for f in listed}
    assert "link_to_file.py" in names and "vendor/lib/.git" in names
    assert not any(n.startswith(("link_to_dir/", "loop/", ".git/", "build/")) for n in names)
    assert "ignored_by_dot_ignore.py" in names  # .ignore files are not read
    sub = tree / "pkg"
    assert rels(await glob_ripgrep.list_files("rg", sub, LANE) or []) == rels(glob_walk(sub))


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("**/*", None),
        ("*.py", None),
        ("**/*.py", None),
        ("**/.*", None),
        ("pkg/**/*", None),
        ("**/*", "nested"),
        ("**/*.{txt,md}", None),
        ("link_*", None),
    ],
)
async def test_glob_answers_the_same_with_and_without_ripgrep(
    run: Run, ctx: ToolContext, tree: Path, pattern: str, path: str | None
) -> None:
    ctx.config.glob_max_results = 7
    args = {"pattern": pattern} | ({"path": path} if path else {})
    with_rg = await run(GLOB_TOOL, args)
    ctx_py = dataclasses.replace(ctx, config=dataclasses.replace(ctx.config, ripgrep=None))
    without = await GLOB_TOOL.call(GLOB_TOOL.input_model.model_validate(args), ctx_py)
    assert with_rg.content == without.content
    assert with_rg.content != "No files found"


async def test_an_rgignore_file_leaves_the_answer_to_the_walk(tree: Path) -> None:
    (tree / "pkg" / ".rgignore").write_text("mod.py\n")
    assert await glob_ripgrep.list_files("rg", tree, LANE) is None
    # An ancestor's .rgignore counts too.
    assert await glob_ripgrep.list_files("rg", tree / "pkg" / "deep", LANE) is None
    assert await glob_ripgrep.list_files("rg", tree / "other", LANE) is not None
    (tree.parent / ".rgignore").write_text("a.py\n")
    assert await glob_ripgrep.list_files("rg", tree / "other", LANE) is None


async def test_a_missing_ripgrep_falls_back_to_the_walk(
    run: Run, ctx: ToolContext, tree: Path
) -> None:
    expected = await run(GLOB_TOOL, {"pattern": "**/*.py"})
    ctx.config.ripgrep = "definitely-not-ripgrep-xyz"
    assert (await run(GLOB_TOOL, {"pattern": "**/*.py"})).content == expected.content
