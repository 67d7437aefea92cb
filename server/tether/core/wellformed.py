"""Text that can be written as UTF-8.

Python strings may hold lone surrogates (U+D800..U+DFFF): ``os.fsdecode`` gives them for
the bytes of a file name that are not UTF-8, ``surrogateescape`` for such bytes in argv and
stdin, and ``json.loads`` for a ``\\udfff`` escape. Encoding them as UTF-8 fails, and the
Messages API refuses a body that holds one ("The request body is not valid JSON: no low
surrogate in string"). Text from outside that enters a conversation (prompts, tool
results) passes through ``well_formed``; a model's tool input holding one is refused.
"""

from __future__ import annotations

import re
from typing import cast

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (the text itself when it has
    none, which is the usual case and costs one scan in C)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def holds_lone_surrogate(value: object) -> bool:
    """Does any string (key or value) in ``value`` (parsed JSON) hold a lone surrogate?"""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return True
        elif isinstance(item, dict):
            fields = cast("dict[object, object]", item)
            stack.extend(fields.keys())
            stack.extend(fields.values())
        elif isinstance(item, list):
            stack.extend(cast("list[object]", item))
    return False
