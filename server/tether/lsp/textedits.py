"""Minimal TextEdits between two texts, in the negotiated position encoding.

The lines both texts share at the start and at the end are set aside first (found with
slice comparisons, so an edit in a 1 MB file costs a few milliseconds); what is left is
diffed line-wise with difflib, and each change is trimmed to the changed characters, so a
change touches only what it must (the user's cursor and marks elsewhere stay put).
All ranges refer to the original text, as LSP requires.
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass
from typing import Literal

from tether.core.text_span import changed_span, line_count

Encoding = Literal["utf-8", "utf-16", "utf-32"]


@dataclass(frozen=True)
class Pos:
    line: int
    character: int


@dataclass(frozen=True)
class Edit:
    start: Pos
    end: Pos
    new_text: str


def split_lines(text: str) -> list[str]:
    """Lines with their terminators (``\\n``, ``\\r\\n`` or ``\\r``), as LSP counts them."""
    lines: list[str] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\n" or ch == "\r":
            end = i + 2 if ch == "\r" and i + 1 < n and text[i + 1] == "\n" else i + 1
            lines.append(text[start:end])
            start = i = end
            continue
        i += 1
    lines.append(text[start:])
    return lines


def units(text: str, encoding: Encoding) -> int:
    """Length of ``text`` in code units of ``encoding``."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _offset_to_pos(lines: list[str], line: int, col: int, encoding: Encoding) -> Pos:
    return Pos(line, units(lines[line][:col], encoding) if line < len(lines) else 0)


BIG_EDIT_CHARS = 64 * 1024
"""Texts longer than this together are diffed off the event loop."""


def minimal_edits(old: str, new: str, encoding: Encoding = "utf-16") -> list[Edit]:
    if old == new:
        return []
    start, old_end, new_end = changed_span(old, new)
    first_line = line_count(old, start)
    return [
        Edit(
            Pos(e.start.line + first_line, e.start.character),
            Pos(e.end.line + first_line, e.end.character),
            e.new_text,
        )
        for e in _diff(old[start:old_end], new[start:new_end], encoding)
    ]


async def minimal_edits_off_loop(old: str, new: str, encoding: Encoding = "utf-16") -> list[Edit]:
    """``minimal_edits``, in a thread when the texts are big: a whole-file rewrite of a
    large file is a long difflib run, and the daemon's event loop serves every editor."""
    if len(old) + len(new) <= BIG_EDIT_CHARS:
        return minimal_edits(old, new, encoding)
    return await asyncio.to_thread(minimal_edits, old, new, encoding)


def _diff(old: str, new: str, encoding: Encoding) -> list[Edit]:
    old_lines = split_lines(old)
    new_lines = split_lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_chunk = "".join(old_lines[i1:i2])
        new_chunk = "".join(new_lines[j1:j2])
        # Trim the common prefix and suffix inside the changed block.
        prefix = 0
        limit = min(len(old_chunk), len(new_chunk))
        while prefix < limit and old_chunk[prefix] == new_chunk[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < limit - prefix
            and old_chunk[len(old_chunk) - 1 - suffix] == new_chunk[len(new_chunk) - 1 - suffix]
        ):
            suffix += 1
        # Never split a CRLF pair: positions between \r and \n do not exist in LSP.
        if (
            0 < prefix < len(old_chunk)
            and old_chunk[prefix - 1] == "\r"
            and old_chunk[prefix] == "\n"
        ):
            prefix -= 1
        cut = len(old_chunk) - suffix
        if 0 < cut < len(old_chunk) and old_chunk[cut - 1] == "\r" and old_chunk[cut] == "\n":
            suffix -= 1
        start = _locate(old_lines, i1, prefix)
        end = _locate(old_lines, i1, len(old_chunk) - suffix)
        edits.append(
            Edit(
                _offset_to_pos(old_lines, start[0], start[1], encoding),
                _offset_to_pos(old_lines, end[0], end[1], encoding),
                new_chunk[prefix : len(new_chunk) - suffix],
            )
        )
    return edits


def _locate(lines: list[str], first_line: int, offset: int) -> tuple[int, int]:
    """(line, column in characters) of ``offset`` characters after the start of a line."""
    line = first_line
    while line < len(lines) and offset > len(lines[line]):
        offset -= len(lines[line])
        line += 1
    if line < len(lines) and offset == len(lines[line]) and lines[line].endswith(("\n", "\r")):
        # The end of a line's terminator is the start of the next line.
        stripped = lines[line].rstrip("\r\n")
        if offset > len(stripped):
            return (line + 1, 0) if line + 1 < len(lines) else (line, len(lines[line]))
    return line, offset


def apply_edits(old: str, edits: list[Edit], encoding: Encoding = "utf-16") -> str:
    """Apply LSP-style edits (ranges into ``old``) — used to verify and in tests."""
    lines = split_lines(old)

    def to_index(pos: Pos) -> int:
        index = sum(len(line) for line in lines[: pos.line])
        if pos.line >= len(lines):
            return len(old)
        text = lines[pos.line]
        count = 0
        for i, ch in enumerate(text):
            if count >= pos.character:
                return index + i
            count += units(ch, encoding)
        return index + len(text)

    result = old
    for edit in sorted(edits, key=lambda e: (e.start.line, e.start.character), reverse=True):
        a, b = to_index(edit.start), to_index(edit.end)
        result = result[:a] + edit.new_text + result[b:]
    return result
