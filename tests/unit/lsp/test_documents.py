"""Open documents split lines at LSP line ends only (not at form feed, U+2028 and the other
characters ``str.splitlines`` breaks at), so incremental changes land where the client
meant them."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tether.lsp.documents import LspTextDocument, lsp_lines


def change(
    start: tuple[int, int], end: tuple[int, int], text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        ),
        text=text,
    )


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\u2028", "\u2029", "\x85", "\x1c"])
def test_only_lsp_line_ends_split(odd: str) -> None:
    source = f"x = 1{odd}\ny = 2\r\nz\rlast"
    assert lsp_lines(source) == [f"x = 1{odd}\n", "y = 2\r\n", "z\r", "last"]
    assert "".join(lsp_lines(source)) == source


def test_the_reported_corruption_is_gone() -> None:
    doc = LspTextDocument("file:///a.py", "x = 1\x0c\ny = 2\n")
    doc.apply_change(change((1, 0), (1, 1), "Z"))
    assert doc.source == "x = 1\x0c\nZ = 2\n"


def test_u2028_inside_a_string_literal() -> None:
    doc = LspTextDocument("file:///a.js", 's = "a\u2028b";\nt = 1;\n')
    doc.apply_change(change((1, 0), (1, 1), "u"))
    assert doc.source == 's = "a\u2028b";\nu = 1;\n'
