"""``json.loads`` for the fake APIs' request bodies, reusing the messages of recent bodies.

A conversation's next request repeats every message of the one before. Parsing the whole body
again made the fake's time per request grow with the history (about 2 ms at turn 1,000), and a
bench of the harness measured the fake. Here the body's top-level object is walked with the
standard library's own decoder, and in its ``messages`` array each element whose text is the
same, byte for byte, as the element at that place in a recent body is taken as that body's
parsed element (the same object: the strict checker then compares the shared history by
identity). Only new elements are parsed.

The result is always what ``json.loads`` gives; whatever this walk does not handle (another
encoding, a syntax error, extra data) goes to ``json.loads`` itself, so errors are its own
(``tests/unit/providers/test_body_parser.py`` compares both).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(s: str, i: int) -> int:
    """Past the whitespace at ``i``."""
    blank = _WS.match(s, i)
    return blank.end() if blank else i


def _separator(s: str, i: int, close: str) -> tuple[int, bool]:
    """Past the whitespace and the ``,`` or ``close`` at ``i``: the index after them, and
    whether it was ``close``."""
    i = _skip(s, i)
    mark = s[i : i + 1]
    if mark == close:
        return i + 1, True
    if mark != ",":
        raise _Fallback
    return _skip(s, i + 1), False


class _Fallback(Exception):
    """Let ``json.loads`` decide."""


class BodyParser:
    """Thread-safe (the fakes answer on several threads)."""

    def __init__(self, keep: int = 4) -> None:
        self._keep = keep
        self._recent: list[_Known] = []
        self._lock = threading.Lock()

    def loads(self, raw: bytes) -> Any:
        try:
            return self._object(raw.decode("utf-8"))
        except (_Fallback, ValueError):
            return json.loads(raw or b"null")

    def _object(self, s: str) -> dict[str, Any]:
        i = _skip(s, 0)
        if s[i : i + 1] != "{":
            raise _Fallback
        out: dict[str, Any] = {}
        i = _skip(s, i + 1)
        if s[i : i + 1] == "}":
            return self._end(s, i + 1, out)
        while True:
            if s[i : i + 1] != '"':
                raise _Fallback
            key, i = _DECODER.raw_decode(s, i)
            i = _skip(s, i)
            if s[i : i + 1] != ":":
                raise _Fallback
            i = _skip(s, i + 1)
            if key == "messages" and s[i : i + 1] == "[":
                value, i = self._messages(s, i)
            else:
                value, i = _DECODER.raw_decode(s, i)
            out[key] = value
            i, closed = _separator(s, i, "}")
            if closed:
                return self._end(s, i, out)

    @staticmethod
    def _end(s: str, i: int, out: dict[str, Any]) -> dict[str, Any]:
        if _skip(s, i) != len(s):
            raise _Fallback  # extra data
        return out

    def _messages(self, s: str, i: int) -> tuple[list[Any], int]:
        i = _skip(s, i + 1)
        if s[i : i + 1] == "]":
            return [], i + 1
        first = i
        values: list[Any] = []
        ends: list[int] = []
        with self._lock:
            recent = list(self._recent)
        # A recent body of the same conversation: all its messages but the last (where the
        # cache mark was) repeated, byte for byte, in one comparison.
        for known in recent:
            if known.head and s.startswith(known.head, i):
                values, ends = known.values[:-1], known.ends[:-1]
                i, closed = _separator(s, i + len(known.head), "]")
                if closed:
                    return self._remember(s, first, i, values, ends)
                break
        while True:
            if s[i : i + 1] not in ("{", "["):
                raise _Fallback  # only self-delimiting texts are reused (not "12" of "123")
            value, i = _DECODER.raw_decode(s, i)
            values.append(value)
            ends.append(i - first)
            i, closed = _separator(s, i, "]")
            if closed:
                return self._remember(s, first, i, values, ends)

    def _remember(
        self, s: str, first: int, after: int, values: list[Any], ends: list[int]
    ) -> tuple[list[Any], int]:
        """Keep this body's messages for the next; return them and ``after`` (past ``]``)."""
        head = s[first : first + ends[-2]] if len(ends) > 1 else ""
        with self._lock:
            self._recent = [_Known(head, ends, values), *self._recent][: self._keep]
        return values, after


@dataclass(frozen=True)
class _Known:
    """A recent body's messages."""

    head: str
    """The text of all but the last, as written (separators included)."""
    ends: list[int]
    """Where each ends, from the start of the first."""
    values: list[Any]
