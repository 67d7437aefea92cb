"""Hunks on the wire: whole-line ranges, and ranges that end in a last line without a line
break, counted in the negotiated encoding."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tether.lsp.actions import code_actions
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
    titles = [c.title for _k, c, _why in review_actions("s", HUNK.path, located, 1, 1)]
    assert titles == [
        "Tether: keep this change",
        "Tether: undo this change",
        "Tether: keep all changes in this file",
        "Tether: undo all changes in this file",
    ]
    other.state = "kept"
    titles = [c.title for _k, c, _why in review_actions("s", HUNK.path, located, 8, 8)]
    assert titles == [
        "Tether: undo this change",
        "Tether: keep all changes in this file",
        "Tether: undo all changes in this file",
    ]


def test_a_conflicting_change_is_a_disabled_action_saying_why() -> None:
    """Its lines changed since the turn: nothing can be done to it, and the code action
    menu says so (LSP ``CodeAction.disabled``) instead of offering nothing."""
    hunk = Hunk("t-3", "t", HUNK.path, Block(4, ("a\n",), 4, ("b\n",)))
    located = [Located(hunk, None, conflict=True)]
    assert review_actions("s", HUNK.path, located, 0, 2) == []  # elsewhere
    ((kind, command, why),) = review_actions("s", HUNK.path, located, 4, 4)
    assert command.title == "Tether: conflict: this change cannot be kept or undone"
    assert why is not None and "changed after the turn made them" in why
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=HUNK.path.as_uri()),
        range=types.Range(start=types.Position(4, 0), end=types.Position(4, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    review = [(kind, command, why)]
    (action,) = code_actions(params, ["x"] * 6, None, HUNK.path, literals=True, review=review)
    assert isinstance(action, types.CodeAction)
    assert action.disabled is not None and action.disabled.reason == why
    assert action.command is None  # nothing to run
    assert code_actions(params, ["x"] * 6, None, HUNK.path, literals=False, review=review) == []
