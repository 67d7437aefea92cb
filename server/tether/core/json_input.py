"""JSON from outside the process (editors, programs, files, transcripts): parsed with a
bound on nesting, so that no input can crash a reader.

Python's ``json`` recurses once per level and raises ``RecursionError`` somewhere near a
thousand levels (where depends on how deep the caller already is), which is not a
``ValueError``: every reader that caught only the latter died on a 2 KB message. pydantic
parses at most 200 levels and serializes at most 255, so a value nested deeper than
``MAX_DEPTH`` could be read here and fail later (validated, written to a transcript, sent
back). ``parse_json`` refuses it at the door with ``JsonTooDeepError``, a ``ValueError``, so
each reader's existing "not JSON" path reports it.

A message too small to hold ``MAX_DEPTH`` opening brackets (counted in C) needs no more;
otherwise the parsed value is walked one level at a time, at a cost that grows with the
number of lists and objects, not with the text (a 1 MB file in a didOpen is one string).
``bench/bad_input.py`` measures it against ``json.loads`` alone.
"""

from __future__ import annotations

import json
from typing import Any, cast

from tether.core.wellformed import holds_lone_surrogate

MAX_DEPTH = 200
"""Deepest nesting accepted: pydantic's own parsing limit."""
_COUNTED = 64 * 1024
"""Up to this size, counting brackets (in C) is cheaper than walking the value."""


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
    if len(data) <= _COUNTED and _brackets(data) <= max_depth:
        return value  # too few brackets to nest that deep (a small message: counted in C)
    if too_deep(value, max_depth):
        raise JsonTooDeepError(value, max_depth)
    return value


def _brackets(data: str | bytes | bytearray) -> int:
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Does ``value`` (parsed JSON) nest lists and dicts more than ``limit`` levels? One
    level at a time, so the work per container is a C-level ``extend``."""
    level: list[object] = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        children: list[object] = []
        for item in level:
            if isinstance(item, dict):
                children.extend(cast("dict[object, object]", item).values())
            else:
                children.extend(cast("list[object]", item))
        level = [child for child in children if isinstance(child, dict | list)]
        if not level:
            return False
    return True


MODEL_INPUT_REFUSALS = {
    "deep": f"is nested more than {MAX_DEPTH} levels deep",
    "surrogate": "holds a lone surrogate escape (such as \\udfff), which is not text",
}


def model_input_problem(value: object) -> str | None:
    """Why a tool input a model sent (already parsed) cannot be taken, or None. The one
    budget for what a model may send: inputs within it are written to transcripts, read
    back and sent to the model again without error."""
    if too_deep(value, MAX_DEPTH):
        return MODEL_INPUT_REFUSALS["deep"]
    if holds_lone_surrogate(value):
        return MODEL_INPUT_REFUSALS["surrogate"]
    return None


def parse_model_input(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """A tool input as a model streamed it: ``(value, None)``, ``(None, None)`` when it is
    not a complete JSON object (cut off), or ``({}, why)`` when it parses but cannot be
    taken (``model_input_problem``)."""
    if not raw.strip():
        return {}, None
    try:
        value = parse_json(raw)
    except JsonTooDeepError:
        return {}, MODEL_INPUT_REFUSALS["deep"]
    except ValueError:
        return None, None
    if not isinstance(value, dict):
        return None, None
    fields = cast("dict[str, Any]", value)
    # A lone surrogate can only come from an escape: most inputs skip the walk.
    if ("\\ud" in raw or "\\uD" in raw) and model_input_problem(fields) is not None:
        return {}, MODEL_INPUT_REFUSALS["surrogate"]
    return fields, None
