"""Names a line of output cannot hold as they are (a newline, bytes that are not UTF-8, a
leading quote) are shown C-quoted by Glob and Grep, with ripgrep and without, and every
file tool takes the quoted form back to the same file."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from conftest import Run

from tether.tools.context import ToolContext
from tether.tools.glob import GLOB_TOOL
from tether.tools.grep import GREP_TOOL
from tether.tools.names import read_shown_name, shown_name
from tether.tools.read import READ_TOOL

ODD = {
    "line\nbreak.txt": '"line\\nbreak.txt"',
    os.fsdecode(b"caf\xe9.txt"): '"caf\\xe9.txt"',
    '"quoted".txt': '"\\"quoted\\".txt"',
    "tab\there\\.txt": '"tab\\there\\\\.txt"',
    "plain é.txt": "plain é.txt",
}


def test_shown_names_read_back_to_the_same_name() -> None:
    for name, shown in ODD.items():
        assert shown_name(name) == shown
        assert read_shown_name(shown) == name
    assert read_shown_name('"a"b"') == '"a"b"'  # not a quoted name: taken as it is
    assert read_shown_name('"bad\\q"') == '"bad\\q"'


@pytest.mark.parametrize("ripgrep", ["rg", None])
async def test_glob_and_grep_list_odd_names_one_a_line(
    workspace: Path, ctx: ToolContext, run: Run, ripgrep: str | None
) -> None:
    if ripgrep and shutil.which(ripgrep) is None:
        pytest.fail("ripgrep is required")
    for name in ODD:
        (workspace / name).write_text("needle\n")
    context = dataclasses.replace(ctx, config=dataclasses.replace(ctx.config, ripgrep=ripgrep))
    expected = sorted(shown_name(f"{workspace}/{name}") for name in ODD)
    listed = await run(GLOB_TOOL, {"pattern": "*.txt"}, context)
    assert sorted(str(listed.content).split("\n")) == expected
    found = await run(GREP_TOOL, {"pattern": "needle"}, context)
    assert sorted(str(found.content).split("\n")[1:]) == expected
    content = await run(GREP_TOOL, {"pattern": "needle", "output_mode": "content"}, context)
    assert sorted(str(content.content).split("\n")) == sorted(f"{e}:1:needle" for e in expected)
    for line in expected:
        read = await run(READ_TOOL, {"file_path": line}, context)
        assert not read.is_error and "needle" in str(read.content), (line, read.content)
