"""Hunks: the blocks of lines a turn changed in a file, and where each one is now.

A turn's hunks come from a line diff of the file's text before the turn and after it: the
lines both texts share at the start and at the end are set aside first (slice comparisons,
``core.text_span``), the rest is diffed with difflib, and every changed block is a hunk.

A hunk is found in the file's current text the same way: the text the hunk was made in (the
turn's text after) is diffed against the current one, and the hunk's lines must still be
one unchanged run there — they moved when other lines changed. When any of its own lines
changed, or lines were put in between them, the hunk is a conflict: nobody can say where it
is, so it is never merged. An empty run (the lines a turn removed) is found when nothing was
put at its place.

Nothing here runs while a turn runs: hunks are derived when someone asks for them, and a
line diff of two versions of one file costs about what the edit that made them did
(``bench/changes.py``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from tether.core.text_span import changed_span, line_count

Tag = Literal["equal", "replace", "delete", "insert"]
Opcode = tuple[Tag, int, int, int, int]
"""difflib's (tag, i1, i2, j1, j2) over lines: ``old[i1:i2]`` became ``new[j1:j2]``."""

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""One line with its terminator, as LSP counts lines (``\\n``, ``\\r\\n`` or ``\\r``)."""


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their terminators; a text ending in a line break has no
    empty last line."""
    return _LINE.findall(text)


def count_lines(text: str) -> int:
    """``len(split_lines(text))``, without making the lines."""
    if not text:
        return 0
    ends_open = not text.endswith(("\n", "\r"))
    return line_count(text, len(text)) + (1 if ends_open else 0)


@dataclass(frozen=True)
class LineDiff:
    """How one text's lines became another's: opcodes covering both texts, and the lines of
    the changed middle (the only ones a caller needs)."""

    opcodes: list[Opcode]
    first: int
    """The middle's first line (in both texts)."""
    old_middle: list[str]
    new_middle: list[str]

    def old_lines(self, start: int, end: int) -> tuple[str, ...]:
        return tuple(self.old_middle[start - self.first : end - self.first])

    def new_lines(self, start: int, end: int) -> tuple[str, ...]:
        return tuple(self.new_middle[start - self.first : end - self.first])


def diff_lines(old: str, new: str) -> LineDiff:
    if old == new:
        total = count_lines(old)
        return LineDiff([("equal", 0, total, 0, total)] if total else [], 0, [], [])
    start, old_end, new_end = changed_span(old, new)
    first = line_count(old, start)
    old_middle = split_lines(old[start:old_end])
    new_middle = split_lines(new[start:new_end])
    old_total = first + len(old_middle) + count_lines(old[old_end:])
    new_total = first + len(new_middle) + count_lines(new[new_end:])
    ops: list[Opcode] = []
    if first:
        ops.append(("equal", 0, first, 0, first))
    matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        op: Opcode = (tag, i1 + first, i2 + first, j1 + first, j2 + first)
        if tag == "equal" and ops and ops[-1][0] == "equal":
            previous = ops.pop()
            op = ("equal", previous[1], op[2], previous[3], op[4])
        ops.append(op)
    old_after, new_after = first + len(old_middle), first + len(new_middle)
    if old_after < old_total:
        tail: Opcode = ("equal", old_after, old_total, new_after, new_total)
        if ops and ops[-1][0] == "equal":
            previous = ops.pop()
            tail = ("equal", previous[1], old_total, previous[3], new_total)
        ops.append(tail)
    return LineDiff(ops, first, old_middle, new_middle)


@dataclass(frozen=True)
class Block:
    """One changed block: ``old`` lines at ``old_start`` became ``new`` at ``new_start``."""

    old_start: int
    old: tuple[str, ...]
    new_start: int
    new: tuple[str, ...]


def changed_blocks(before: str, after: str) -> list[Block]:
    """The blocks of lines that differ between ``before`` and ``after``, in order."""
    diff = diff_lines(before, after)
    return [
        Block(i1, diff.old_lines(i1, i2), j1, diff.new_lines(j1, j2))
        for tag, i1, i2, j1, j2 in diff.opcodes
        if tag != "equal"
    ]


def follow(opcodes: list[Opcode], start: int, end: int) -> tuple[int, int] | None:
    """Where lines ``[start, end)`` of the old text are in the new one: the same lines, moved;
    None when any of them changed or lines were put between them (for an empty run: when
    lines were put at its place, or it lies inside a changed block)."""
    if start == end:
        for tag, i1, i2, _j1, _j2 in opcodes:
            if tag == "insert" and i1 == start:
                return None
            if tag != "equal" and i1 < start < i2:
                return None
        for tag, i1, i2, j1, _j2 in opcodes:
            if tag == "equal" and i1 <= start <= i2:
                return j1 + start - i1, j1 + start - i1
        for _tag, i1, i2, j1, j2 in opcodes:  # at the edge of a changed block
            if i1 == start:
                return j1, j1
            if i2 == start:
                return j2, j2
        return (0, 0) if start == 0 and not opcodes else None
    for tag, i1, i2, j1, _j2 in opcodes:
        if tag == "equal" and i1 <= start and end <= i2:
            return j1 + start - i1, j1 + end - i1
    return None


def snippet(lines: tuple[str, ...], limit: int = 60) -> str:
    """The first line with text in it, stripped and cut to ``limit`` characters."""
    for line in lines:
        text = line.strip()
        if text:
            return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""


def summary(old: tuple[str, ...], new: tuple[str, ...]) -> str:
    """One line saying what a block did: "replaced 2 lines ("a…") with 3 ("b…")"."""

    def counted(n: int) -> str:
        return f"{n} line" if n == 1 else f"{n} lines"

    if not old:
        return f"added {counted(len(new))} ({_quoted(new)})"
    if not new:
        return f"removed {counted(len(old))} ({_quoted(old)})"
    return f"replaced {counted(len(old))} ({_quoted(old)}) with {len(new)} ({_quoted(new)})"


def _quoted(lines: tuple[str, ...]) -> str:
    text = snippet(lines)
    return f'"{text}"' if text else "blank"
