"""Hunks: the line diff a turn's hunks come from, and following a hunk into a later text."""

from __future__ import annotations

import random

import pytest

from tether.session.hunks import (
    changed_blocks,
    count_lines,
    diff_lines,
    follow,
    split_lines,
    summary,
)

BEFORE = "".join(f"line {i}\n" for i in range(20))


def edit(text: str, line: int, new: str | None) -> str:
    """``text`` with one line replaced (None: removed)."""
    lines = split_lines(text)
    lines[line : line + 1] = [] if new is None else [new]
    return "".join(lines)


@pytest.mark.parametrize(
    "text",
    ["", "a", "a\n", "a\r\nb", "a\rb\r", "\n\n", "x\r\n\r\ny", "é\n😀\r\n"],
)
def test_lines_are_lsp_lines_with_their_breaks(text: str) -> None:
    lines = split_lines(text)
    assert "".join(lines) == text
    assert count_lines(text) == len(lines)
    assert all(line for line in lines)
    # A form feed or a line separator does not end a line for LSP.
    assert split_lines("a\x0cb\u2028c\n") == ["a\x0cb\u2028c\n"]


def test_blocks_are_the_changed_runs_in_order() -> None:
    after = edit(edit(edit(BEFORE, 2, "two\n"), 9, None), 15, "fifteen\nand more\n")
    blocks = changed_blocks(BEFORE, after)
    assert [(b.old_start, b.old, b.new_start, b.new) for b in blocks] == [
        (2, ("line 2\n",), 2, ("two\n",)),
        (9, ("line 9\n",), 9, ()),
        (16, ("line 16\n",), 15, ("fifteen\n", "and more\n")),
    ]
    assert changed_blocks(BEFORE, BEFORE) == []
    (created,) = changed_blocks("", "new\nfile")
    assert created.old == () and created.new == ("new\n", "file")


def test_opcodes_cover_both_texts() -> None:
    rng = random.Random(7)
    for _ in range(200):
        old = "".join(rng.choice(["a\n", "b\n", "c\n", "d"]) for _ in range(rng.randrange(12)))
        new = "".join(rng.choice(["a\n", "b\n", "c\n", "e\n"]) for _ in range(rng.randrange(12)))
        ops = diff_lines(old, new).opcodes
        old_lines, new_lines = split_lines(old), split_lines(new)
        rebuilt: list[str] = []
        at_old = at_new = 0
        for tag, i1, i2, j1, j2 in ops:
            assert (i1, j1) == (at_old, at_new)
            if tag == "equal":
                assert old_lines[i1:i2] == new_lines[j1:j2]
            rebuilt += new_lines[j1:j2]
            at_old, at_new = i2, j2
        assert (at_old, at_new) == (len(old_lines), len(new_lines))
        assert rebuilt == new_lines


def test_a_hunk_moves_with_lines_changed_elsewhere() -> None:
    after = BEFORE
    later = edit(edit(after, 1, "one\nmore\n"), 18, None)  # a line added above, one removed below
    ops = diff_lines(after, later).opcodes
    assert follow(ops, 5, 8) == (6, 9)
    assert follow(ops, 10, 10) == (11, 11)  # an empty run (removed lines) moves too


def test_a_hunk_whose_lines_changed_is_nowhere() -> None:
    later = edit(BEFORE, 6, "six\n")
    ops = diff_lines(BEFORE, later).opcodes
    assert follow(ops, 5, 8) is None  # one of its lines changed
    assert follow(ops, 4, 6) == (4, 6)  # the neighbours right before and after are fine
    assert follow(ops, 7, 9) == (7, 9)
    inserted = edit(BEFORE, 6, "line 6\nput in between\n")
    assert follow(diff_lines(BEFORE, inserted).opcodes, 5, 8) is None
    # Lines put where removed lines were: that empty run has nowhere to go.
    assert follow(diff_lines(BEFORE, inserted).opcodes, 7, 7) is None
    assert follow(diff_lines(BEFORE, "").opcodes, 0, 3) is None


def test_empty_texts_and_the_end_of_the_file() -> None:
    assert follow(diff_lines("", "").opcodes, 0, 0) == (0, 0)
    assert follow(diff_lines("", "x\n").opcodes, 0, 0) is None
    ops = diff_lines("a\nb\n", "a\nB\n").opcodes
    assert follow(ops, 2, 2) == (2, 2)  # after a changed last line


def test_summaries_are_one_short_line() -> None:
    assert summary(("a\n",), ("b\n", "c\n")) == 'replaced 1 line ("a") with 2 ("b")'
    assert summary((), ("\n", "  import os\n")) == 'added 2 lines ("import os")'
    assert summary(("x" * 200 + "\n",), ()).startswith('removed 1 line ("xxx')
    assert len(summary(("x" * 200 + "\n",), ())) < 90
    assert summary(("\n",), ()) == "removed 1 line (blank)"
