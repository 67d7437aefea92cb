"""JSON from outside the process (editors, programs, files, transcripts): parsed with a
bound on nesting, so that no input can crash a reader.

Python's ``json`` recurses once per level and raises ``RecursionError`` somewhere near a
thousand levels (where depends on how deep the caller already is), which is not a
``ValueError``: every reader that caught only the latter died on a 2 KB message. pydantic
parses at most 200 levels and serializes at most 255, so a value nested deeper than
``MAX_DEPTH`` could be read here and fail later (validated, written to a transcript, sent
back). ``parse_json`` refuses it at the door with ``JsonTooDeepError``, a ``ValueError``, so
each reader's existing "not JSON" path reports it.

The depth is checked only for text with more than ``MAX_DEPTH`` opening brackets (counted
in C, brackets inside strings included); then the parsed value's containers are walked, and
brackets inside strings cost nothing more.
"""

from __future__ import annotations

import json
from typing import Any, cast

MAX_DEPTH = 200
"""Deepest nesting accepted: pydantic's own parsing limit."""


class JsonTooDeepError(ValueError):
    """JSON nested deeper than ``MAX_DEPTH`` levels."""

    def __init__(self, parsed: object = None, limit: int = MAX_DEPTH) -> None:
        super().__init__(f"JSON nested more than {limit} levels deep")
        self.parsed = parsed
        """The value when Python's parser could read it (its top level tells the id of a
        request to answer), else None."""


def parse_json(data: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that raises ``ValueError`` (``JsonTooDeepError`` for nesting deeper
    than ``max_depth``) for every bad input, never ``RecursionError``."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise JsonTooDeepError(None, max_depth) from None
    if _brackets(data) > max_depth and too_deep(value, max_depth):
        raise JsonTooDeepError(value, max_depth)
    return value


def _brackets(data: str | bytes | bytearray) -> int:
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Does ``value`` (parsed JSON) nest lists and dicts more than ``limit`` levels?"""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: list[object]
        if isinstance(item, dict):
            children = list(cast("dict[object, object]", item).values())
        elif isinstance(item, list):
            children = cast("list[object]", item)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if _container(child))
    return False


def _container(value: object) -> bool:
    return isinstance(value, dict | list)
