"""Part of a file read from disk without holding the whole of it.

Read with ``offset``/``limit`` of a file no editor buffer holds streams the file in chunks:
it keeps only the lines asked for (each cut at the line limit), counts the others, and
hashes and checks the whole text on the way, so the result (lines, total, the hash Edit
later compares) is exactly what splitting the whole text would give (``split_lines``:
lines end at LF, a CR before it dropped; UTF-8 with an optional BOM).
"""

from __future__ import annotations

import codecs
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from tether.tools.paths import open_no_symlinks

CHUNK_BYTES = 1 << 20
_BOM = codecs.BOM_UTF8


@dataclass
class LineRange:
    """Lines ``start``.. of a file (as many as were asked for and exist)."""

    start: int
    lines: list[str] = field(default_factory=lambda: list[str]())
    cut: list[int] = field(default_factory=lambda: list[int]())
    """Characters left out of each of ``lines`` (0: the whole line is there)."""
    total: int = 0
    """Lines in the whole file."""
    hash: str = ""
    """``text_hash`` of the whole text."""


class _Collector:
    def __init__(self, start: int, count: int, max_chars: int) -> None:
        self.out = LineRange(start)
        self.end = start + count - 1
        self.max_chars = max_chars
        self.kept: list[str] = []
        self.kept_chars = 0
        self.length = 0
        self.last = ""

    def wanted(self, number: int) -> bool:
        return self.out.start <= number <= self.end

    def add(self, piece: str) -> None:
        if not piece:
            return
        room = self.max_chars + 1 - self.kept_chars
        if room > 0:
            self.kept.append(piece[:room])
            self.kept_chars += min(len(piece), room)
        self.length += len(piece)
        self.last = piece[-1]

    def finish(self) -> None:
        length = self.length - (self.last == "\r")  # the CR of a CRLF is no part of the line
        line = "".join(self.kept)[: min(length, self.max_chars)]
        self.out.lines.append(line)
        self.out.cut.append(length - len(line))
        self.kept, self.kept_chars, self.length, self.last = [], 0, 0, ""


def read_line_range(path: Path, start: int, count: int, max_chars: int) -> LineRange:
    """Lines ``start`` to ``start + count - 1`` of ``path`` (1-based), each cut to
    ``max_chars``. Raises what reading the whole file would (``UnicodeDecodeError`` for
    text that is not UTF-8, ``OSError``)."""
    collect = _Collector(start, count, max_chars)
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    hasher = hashlib.blake2b(digest_size=16)
    done = 0  # lines finished so far
    open_line = False  # text after the last LF
    first = True
    with os.fdopen(open_no_symlinks(path), "rb") as f:
        while True:
            # The first read takes a whole BOM at least: it is left out of the hash.
            raw = f.read(max(CHUNK_BYTES, len(_BOM)) if first else CHUNK_BYTES)
            text = decoder.decode(raw, final=not raw)
            hasher.update(raw[len(_BOM) :] if first and raw.startswith(_BOM) else raw)
            first = False
            if text:
                ends = text.count("\n")
                if done + 1 > collect.end or done + ends + 1 < start:
                    done += ends  # no line asked for is in this chunk
                else:
                    pieces = text.split("\n")
                    for i, piece in enumerate(pieces):
                        number = done + 1
                        if collect.wanted(number):
                            collect.add(piece)
                        if i < len(pieces) - 1:
                            if collect.wanted(number):
                                collect.finish()
                            done += 1
                open_line = not text.endswith("\n")
            if not raw:
                break
    if open_line:
        if collect.wanted(done + 1):
            collect.finish()
        done += 1
    collect.out.total = done
    collect.out.hash = hasher.hexdigest()
    return collect.out
