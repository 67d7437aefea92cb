"""Hunks on the wire: whole-line ranges, and ranges that end in a last line without a line
break, counted in the negotiated encoding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.lsp.changes import hunk_range, review_actions
from tether.lsp.textedits import Encoding
from tether.session.change_model import Hunk, Located
from tether.session.hunks import Block

HUNK = Hunk("t-1", "t", Path("/ws/a.py"), Block(1, ("x\n",), 1, ("y\n",)))


def span(located: Located, encoding: Encoding = "utf-16") -> tuple[tuple[int, int], ...]:
    found = hunk_range(located, encoding)
    assert found is not None
    return tuple((found[k]["line"], found[k]["character"]) for k in ("start", "end"))


def test_whole_lines() -> None:
    assert span(Located(HUNK, (1, 3))) == ((1, 0), (3, 0))
    assert span(Located(HUNK, (2, 2))) == ((2, 0), (2, 0))  # removed lines: where they were
    assert hunk_range(Located(HUNK, None, conflict=True), "utf-16") is None


@pytest.mark.parametrize(("encoding", "end"), [("utf-8", 8), ("utf-16", 5), ("utf-32", 4)])
def test_the_last_line_without_a_break(encoding: Encoding, end: int) -> None:
    tail = "é😀ab"  # the file's last line, with no line break after it
    assert span(Located(HUNK, (1, 3), tail=tail), encoding) == ((1, 0), (2, end))
    assert span(Located(HUNK, (3, 3), tail=tail), encoding) == ((2, end), (2, end))


def test_actions_only_on_the_lines_of_a_change() -> None:
    other = Hunk("t-2", "t", HUNK.path, Block(8, ("a\n",), 8, ("b\n",)))
    located = [Located(HUNK, (1, 2)), Located(other, (8, 9))]
    assert review_actions("s", HUNK.path, located, 4, 6) == []
    titles = [c.title for _k, c in review_actions("s", HUNK.path, located, 1, 1)]
    assert titles == [
        "Tether: keep this change",
        "Tether: undo this change",
        "Tether: keep all changes in this file",
        "Tether: undo all changes in this file",
    ]
    other.state = "kept"
    titles = [c.title for _k, c in review_actions("s", HUNK.path, located, 8, 8)]
    assert titles == [
        "Tether: undo this change",
        "Tether: keep all changes in this file",
        "Tether: undo all changes in this file",
    ]
