"""The terminal's diff of a permission question numbers a region's hunks as in the file."""

from __future__ import annotations

from tether.cli.style import Style
from tether.cli.terminal import diff_lines
from tether.protocol.content import DiffContent

PLAIN = Style(enabled=False)


def test_a_region_diff_is_numbered_from_its_first_line() -> None:
    region = DiffContent(uri="file:///big.py", old_text="a\nb\nc\n", new_text="a\nB\nc\n", line=99)
    assert "@@ -100,3 +100,3 @@" in diff_lines(region, PLAIN)


def test_a_whole_file_diff_is_numbered_from_one() -> None:
    whole = DiffContent(uri="file:///f.py", old_text="a\nb\nc\n", new_text="a\nB\nc\n")
    assert "@@ -1,3 +1,3 @@" in diff_lines(whole, PLAIN)
