"""The Messages API's error shape and the helpers the fake's rules share."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from tether.providers.models import ModelLimits
from tether.testing.image_tokens import without_images


@dataclass(frozen=True)
class ApiError:
    status: int
    type: str
    message: str

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


def invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


class Reject(Exception):
    def __init__(self, error: ApiError):
        super().__init__(error.message)
        self.error = error


def fail(message: str) -> Reject:
    return Reject(invalid(message))


# -- signatures -----------------------------------------------------------------------


def extra(obj: dict[str, Any], allowed: set[str], path: str) -> None:
    for key in obj:
        if key not in allowed:
            where = f"{path}.{key}" if path else key
            raise fail(f"{where}: Extra inputs are not permitted")


def as_dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(f"{path}: Input should be a valid dictionary or object")
    return cast("dict[str, Any]", value)


def as_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise fail(f"{path}: Input should be a valid list")
    return cast("list[Any]", value)


def uses(message: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    for k, block in enumerate(message["content"]):
        if block.get("type") == "tool_use":
            yield k, block


@dataclass
class RequestContext:
    """What the fake knows beyond the body: the model's limits and the responses it gave."""

    limits: ModelLimits
    window: int
    thought_before_tools: set[str] = field(default_factory=lambda: set[str]())
    """tool_use ids of responses that began with a thinking block."""
    betas: frozenset[str] = frozenset()
    """The ``anthropic-beta`` header's features: some request shapes exist only under one."""
    system_messages: bool = True
    """The model takes ``role: "system"`` messages (generally available: no beta needed)."""
    window_counts_output: bool = False
    """The window bounds the input and ``max_tokens`` together (the API's answer for some
    models and deployments: ``input length and `max_tokens` exceed context limit``)."""


def count_input_tokens(body: dict[str, Any]) -> int:
    """The fake's token rule: a quarter of the UTF-8 bytes of system+tools+messages, and
    each image by the documented rule (``image_tokens``)."""
    payload = {
        "system": body.get("system"),
        "tools": body.get("tools"),
        "messages": body.get("messages"),
    }
    payload, images = without_images(payload, "anthropic")
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return math.ceil(len(raw.encode("utf-8", "surrogatepass")) / 4) + images


# -- the check ------------------------------------------------------------------------


_ESCAPED_SURROGATE = re.compile(rb"(\\+)u[dD]([89a-fA-F])[0-9a-fA-F]{2}")


def lone_surrogate_error(raw: bytes) -> ApiError | None:
    """The API parses bodies as strict JSON (RFC 8259): a ``\\uD800``-``\\uDFFF`` escape
    that is not half of a pair is refused ("The request body is not valid JSON: no low
    surrogate in string", as reported in anthropics/claude-code#1939 and #6273)."""
    if b"\\u" not in raw:
        return None
    after_high = -1
    for match in _ESCAPED_SURROGATE.finditer(raw):
        if len(match.group(1)) % 2 == 0:
            continue  # an escaped backslash followed by the letters "ud..."
        high = match.group(2) in b"89abAB"
        if high:
            following = _ESCAPED_SURROGATE.match(raw, match.end())
            if (
                following is not None
                and len(following.group(1)) == 1
                and following.group(2) not in b"89abAB"
            ):
                after_high = following.start()
                continue
        elif match.start() == after_high:
            continue  # the low half of a pair
        char = len(raw[: match.start()].decode("utf-8", "replace"))
        return invalid(
            "The request body is not valid JSON: no low surrogate in string: "
            f"line 1 column {char + 1} (char {char})"
        )
    return None
