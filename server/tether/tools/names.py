"""File names as tools show them to the model, and read them back.

A name on Linux is bytes: it may hold a newline (which would split one line of Glob's list
in two) or bytes that are not UTF-8 (which no API request may carry). Such a name is shown
C-quoted, as ``ls --quoting-style=c`` does: in double quotes, with ``\\n``, ``\\t``, ``\\r``,
``\\\\``, ``\\"`` and ``\\xNN`` for any other control character or undecodable byte; every
other name is shown as it is. A path a tool receives in that form (the model copies what it
saw) is decoded back to the same name, so the file stays reachable.
"""

from __future__ import annotations

import os
import re

_PLAIN = re.compile(r"[^\x00-\x1f\x7f\ud800-\udfff]*\Z")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_UNESCAPES = {"\\": b"\\", '"': b'"', "n": b"\n", "t": b"\t", "r": b"\r"}


def shown_name(name: str) -> str:
    """``name`` as the model reads it: itself, or C-quoted when it must be."""
    if not name.startswith('"') and _PLAIN.match(name):
        return name
    out: list[str] = []
    for ch in name:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def read_shown_name(text: str) -> str:
    """The name ``text`` stands for: a C-quoted name decoded (``os.fsdecode`` of its bytes,
    so undecodable bytes come back as they were), anything else as it is."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    body = text[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            return text  # an unescaped quote inside: not a quoted name
        if ch != "\\":
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _UNESCAPES:
            out += _UNESCAPES[nxt]
            i += 2
        elif nxt == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2 : i + 4]):
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        else:
            return text
    return os.fsdecode(bytes(out))
