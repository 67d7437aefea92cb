"""The editor's framing, fed bytes as they arrive: each complete message is handed over in
the same call, in order, so a reader callback handles what it read without a trip through
a stream and a task per message.

The rules are ``io.read_loop``'s (the same forgiving framing): a ``Content-Length`` header
line sets the next body's length (a bad value is answered with a parse error and the
message skipped), other lines before the blank one are headers to skip, lines outside a
message are garbage to skip until the next header, and a line longer than ``LINE_LIMIT``
is garbage too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

HEADER = re.compile(rb"content-length:[ \t]*([^\r\n]*?)[ \t]*\r?\n?$", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024
LINE_LIMIT = 1 << 20


class Frames:
    def __init__(self, on_body: Callable[[bytes], None], on_error: Callable[[str], None]) -> None:
        self._on_body = on_body
        self._on_error = on_error
        self._buffer = bytearray()
        self._length: int | None = None
        """The length the last ``Content-Length`` header gave (None: none, or a bad one)."""
        self._in_body = False
        """The blank line after the headers came: the next ``_length`` bytes are the body."""

    def body_wanted(self) -> int:
        """How many bytes of a body are still to come (0: a line is next)."""
        return max(0, self._length - len(self._buffer)) if self._in_body and self._length else 0

    def feed(self, data: bytes) -> None:
        """Take ``data``; hand over every message it completes (a handler's exception, such
        as ``SystemExit`` for ``exit``, leaves the rest buffered for a later ``feed``)."""
        buffer = self._buffer
        buffer += data
        at = 0
        try:
            while True:
                if self._in_body:
                    assert self._length is not None
                    end = at + self._length
                    if len(buffer) < end:
                        return
                    body = bytes(buffer[at:end])
                    at = end
                    self._in_body, self._length = False, None
                    self._on_body(body)
                    continue
                newline = buffer.find(b"\n", at)
                if newline < 0:
                    if len(buffer) - at > LINE_LIMIT:
                        at = len(buffer)
                        self._line(b"\0\n")
                    return
                line = bytes(buffer[at : newline + 1])
                at = newline + 1
                self._line(b"\0\n" if len(line) > LINE_LIMIT else line)
        finally:
            del buffer[:at]

    def _line(self, line: bytes) -> None:
        match = HEADER.search(line)
        if match is not None:
            value = match.group(1)
            try:
                if not value.isdigit():  # ASCII digits only: int() also takes "7_5", "+7"
                    raise ValueError
                length = int(value)
                if length > MAX_BODY:
                    raise ValueError
            except ValueError:
                self._length = None
                self._on_error(f"Parse error: bad Content-Length {value!r}")
            else:
                self._length = length
            return
        if self._length is None:
            return  # garbage between messages: skip until the next header
        if line.strip():
            return  # another header (Content-Type)
        self._in_body = True
