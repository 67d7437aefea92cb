"""Part of a file read from disk without holding, or even reading, the whole of it.

Read with ``offset``/``limit`` of a file no editor buffer holds streams the file in chunks.
Up to the first line asked for, chunks are only counted (LF bytes, in C: LF is never part
of a multi-byte UTF-8 character); the lines asked for are decoded and kept (each cut at
the line limit) exactly as splitting the whole text would give them (``split_lines``: lines
end at LF, a CR before it dropped; UTF-8 with an optional BOM). After the last line asked
for, the rest is read only when the file is small enough to edit (``hash_limit``): then it
is hashed and counted, so Edit can later tell whether the file changed. A bigger file is
read no further: its line count is unknown, and the read costs what its range costs.

The work runs on a tool thread and checks ``stop`` between chunks: a cancelled turn does
not leave a thread reading gigabytes.
"""

from __future__ import annotations

import codecs
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tether.core.tool_threads import Stop
from tether.tools.paths import open_no_symlinks

if TYPE_CHECKING:
    from hashlib import blake2b as Blake2b

CHUNK_BYTES = 1 << 20
_BOM = codecs.BOM_UTF8


@dataclass
class LineRange:
    """Lines ``start``.. of a file (as many as were asked for and exist)."""

    start: int
    lines: list[str] = field(default_factory=lambda: list[str]())
    cut: list[int] = field(default_factory=lambda: list[int]())
    """Characters left out of each of ``lines`` (0: the whole line is there)."""
    total: int | None = None
    """Lines in the whole file; None when the file goes on past the range uncounted."""
    hash: str | None = None
    """``text_hash`` of the whole text; None when the file was not read to its end."""


class _Collector:
    def __init__(self, start: int, count: int, max_chars: int) -> None:
        self.out = LineRange(start)
        self.end = start + count - 1
        self.max_chars = max_chars
        self.kept: list[str] = []
        self.kept_chars = 0
        self.length = 0
        self.last = ""

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

    @property
    def full(self) -> bool:
        return len(self.out.lines) >= self.end - self.out.start + 1


def read_line_range(
    path: Path, start: int, count: int, max_chars: int, *, hash_limit: int, stop: Stop
) -> LineRange:
    """Lines ``start`` to ``start + count - 1`` of ``path`` (1-based), each cut to
    ``max_chars``; the whole file hashed and counted only when it is at most ``hash_limit``
    bytes. Raises ``UnicodeDecodeError`` for lines asked for that are not UTF-8,
    ``OSError``, and ``Stopped`` once ``stop`` is set."""
    with os.fdopen(open_no_symlinks(path), "rb") as f:
        small = os.fstat(f.fileno()).st_size <= hash_limit
        reader = _Reader(f, hashlib.blake2b(digest_size=16) if small else None, hash_limit, stop)
        return reader.lines(start, count, max_chars)


class _Reader:
    def __init__(self, f: BinaryIO, hasher: Blake2b | None, limit: int, stop: Stop) -> None:
        self.f = f
        self.hasher = hasher
        self.stop = stop
        self.first = True
        self.limit = limit
        self.taken = 0

    def chunk(self) -> bytes:
        self.stop.check()
        raw = self.f.read(max(CHUNK_BYTES, len(_BOM)) if self.first else CHUNK_BYTES)
        self.taken += len(raw)
        if self.taken > self.limit:
            self.hasher = None  # it grew past the limit while being read
        if self.first and raw.startswith(_BOM):
            self.first = False
            raw = raw[len(_BOM) :]  # the first read takes a whole BOM: no part of the text
            if not raw:
                return self.chunk()
        self.first = False
        if self.hasher is not None:
            self.hasher.update(raw)
        return raw

    def lines(self, start: int, count: int, max_chars: int) -> LineRange:
        collect = _Collector(start, count, max_chars)
        out = collect.out
        done = 0  # lines ended (by LF) before the bytes in hand
        raw = self.chunk()
        ends = raw.count(b"\n")
        open_end = False  # the bytes read so far end inside a line
        while raw and done + ends < start - 1:  # no line asked for starts in this chunk
            done += ends
            open_end = not raw.endswith(b"\n")
            raw = self.chunk()
            ends = raw.count(b"\n")
        if not raw:  # the file ends before line ``start``
            return self._end(out, done + open_end)
        at = 0
        for _ in range(start - 1 - done):
            at = raw.index(b"\n", at) + 1
        done = start - 1
        raw = raw[at:] or self.chunk()
        decoder = codecs.getincrementaldecoder("utf-8")()
        while True:
            text = decoder.decode(raw, final=not raw)
            pieces = text.split("\n")
            for i, piece in enumerate(pieces[:-1]):
                collect.add(piece)
                collect.finish()
                done += 1
                if collect.full:
                    rest = pieces[i + 1 :]
                    pending = bool(decoder.getstate()[0])
                    return self._tail(out, done + len(rest) - 1, bool(rest[-1]) or pending)
            collect.add(pieces[-1])
            if not raw:
                if collect.length:  # a last line without an LF
                    collect.finish()
                    done += 1
                return self._end(out, done)
            raw = self.chunk()

    def _end(self, out: LineRange, total: int) -> LineRange:
        out.total = total
        out.hash = self.hasher.hexdigest() if self.hasher is not None else None
        return out

    def _tail(self, out: LineRange, done: int, open_line: bool) -> LineRange:
        """The range is complete: count and hash the rest when the file is hashed."""
        while self.hasher is not None and (raw := self.chunk()):
            done += raw.count(b"\n")
            open_line = not raw.endswith(b"\n")
        if self.hasher is None:
            return out
        return self._end(out, done + open_line)
