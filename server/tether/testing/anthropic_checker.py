"""The fake Messages API's request check, whole or for what is new.

The real API checks every body whole. A conversation's next request is the previous one
plus a turn (and its cache marks moved to the end), so the fake remembers the last few
bodies it accepted and, for a body that begins with the same messages as one of them, checks
only what follows, with the state the earlier check left (tool_use ids seen, merged
messages, cache marks, sizes for the token rule). Otherwise a long session's fake API spends
time proportional to the history on every request, and a bench of the harness measures the
fake. A body that shares nothing is checked whole; the verdict is the same either way
(``tests/unit/providers/test_strict_fakes.py`` checks both paths give the same answers).
"""

from __future__ import annotations

import json
import math
import threading
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.testing.anthropic_rules import (
    PER_TURN_CONTROL,
    TOP_LEVEL,
    check_cache_marks,
    check_message,
    check_pairing,
    check_system,
    check_tools,
    merge,
)
from tether.testing.anthropic_thinking import check_thinking_blocks, check_thinking_config
from tether.testing.anthropic_wire import (
    ApiError,
    Reject,
    RequestContext,
    as_list,
    extra,
    fail,
    invalid,
    uses,
)
from tether.testing.image_tokens import without_images

__all__ = ["NewPartsRule", "RequestChecker", "Verdict", "canonical_size", "check_request"]


def canonical_size(value: Any) -> int:
    """UTF-8 bytes of ``value`` as the token rule encodes it."""
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return len(raw.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class _Accepted:
    """What checking an accepted body left, to check the next one from."""

    messages: list[Any]
    system_messages: tuple[bool, bool]
    """System messages taken, and their per-message ``output_config`` (the verdict on the
    same messages may differ without them)."""
    checked: list[dict[str, Any] | None]
    marks: list[list[tuple[str, str]]]
    marked: list[int]
    """The messages with cache marks (at most four, or the body was refused)."""
    sizes: list[tuple[int, int]]
    """Each message's JSON size without its images' data, and its images' tokens."""
    merged: list[dict[str, Any]]
    ids: list[list[str]]
    """tool_use ids of each merged message."""
    all_ids: frozenset[str]
    """Every tool_use id of the merged messages (unique, or the body was refused)."""
    head: tuple[Any, Any, int]
    """The system prompt, the tools and the size of their JSON (the same in every request
    of a conversation: the size is kept, not counted again)."""


@dataclass(frozen=True)
class Verdict:
    error: ApiError | None
    tokens: int = 0
    """Input tokens by the token rule (when accepted)."""
    first_new: int = 0
    """Messages before this one were checked in an earlier request."""


NewPartsRule = Callable[[dict[str, Any], int], str | None]
"""A rule of a feature of its own, checked last: (body, first message not checked before)
-> why the API refuses it, or None."""


class RequestChecker:
    """Checks bodies like the real API; keeps the last ``keep`` accepted ones. Thread-safe
    (the fake answers requests on several threads)."""

    def __init__(self, keep: int = 4, also: NewPartsRule | None = None) -> None:
        self._keep = keep
        self._also = also
        self._accepted: list[_Accepted] = []
        self._lock = threading.Lock()

    def check(self, body: dict[str, Any], ctx: RequestContext) -> Verdict:
        with self._lock:
            known = list(self._accepted)
        try:
            accepted, tokens, first_new = _check(body, ctx, known)
            problem = self._also(body, first_new) if self._also else None
        except Reject as r:
            return Verdict(r.error)
        if problem is not None:
            return Verdict(invalid(problem))
        if self._keep:
            with self._lock:
                self._accepted = [accepted, *self._accepted][: self._keep]
        return Verdict(None, tokens, first_new)


def check_request(body: dict[str, Any], ctx: RequestContext) -> ApiError | None:
    """The first rule ``body`` breaks (checked whole), or None."""
    return RequestChecker(keep=0).check(body, ctx).error


def _shared(messages: list[Any], before: _Accepted) -> int:
    """How many leading messages ``messages`` shares with ``before`` and may reuse: the last
    message of ``before`` was checked as the last one (it may be empty), so never that."""
    previous = before.messages
    low, high = 0, min(len(messages), len(previous) - 1)
    if messages[:high] == previous[:high]:  # the usual case; slices compare in C
        return high
    while low < high:  # the longest equal prefix, comparing each part once
        middle = (low + high + 1) // 2
        if messages[low:middle] == previous[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _check(
    body: dict[str, Any], ctx: RequestContext, known: list[_Accepted]
) -> tuple[_Accepted, int, int]:
    extra(body, TOP_LEVEL, "")
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            raise fail(f"{key}: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise fail("max_tokens: Input should be greater than or equal to 1")
    if max_tokens > ctx.limits.max_output:
        raise fail(
            f"max_tokens: {max_tokens} > {ctx.limits.max_output}, which is the maximum "
            f"allowed number of output tokens for {body['model']}"
        )
    marks: list[tuple[str, str]] = []
    check_tools(body.get("tools"), marks)
    check_system(body.get("system"), marks)
    messages = as_list(body["messages"], "messages")
    if not messages:
        raise fail("messages: at least one message is required")
    system_messages = (ctx.system_messages, PER_TURN_CONTROL in ctx.betas)

    reuse, before = 0, None
    for candidate in known:
        # One that cannot share more than the best so far is not compared (a deep compare
        # of the history, the largest cost of a long conversation's request).
        if candidate.system_messages == system_messages and len(candidate.messages) - 1 > reuse:
            shared = _shared(messages, candidate)
            if shared > reuse:
                reuse, before = shared, candidate
    checked = before.checked[:reuse] if before else []
    message_marks = before.marks[:reuse] if before else []
    sizes = before.sizes[:reuse] if before else []
    marked = [i for i in before.marked if i < reuse] if before else []
    for i in range(reuse, len(messages)):
        own: list[tuple[str, str]] = []
        checked.append(check_message(messages[i], i, len(messages), own, *system_messages))
        message_marks.append(own)
        stripped, images = without_images(messages[i], "anthropic")
        sizes.append((canonical_size(stripped), images))
        if own:
            marked.append(i)
    for i in marked:
        marks.extend(message_marks[i])
    check_cache_marks(marks)
    thinking = check_thinking_config(body.get("thinking"), max_tokens, ctx)

    # Merged messages followed by one that begins in the reused part are final and the
    # same as before. Pairing is checked again from the last of them on (the one after it
    # may have taken more messages).
    kept = 0
    if before is not None:  # the merged messages that begin in the reused part, less one
        kept = max(bisect_left(before.merged, reuse, key=_index) - 1, 0)
    merged = before.merged[:kept] if before else []
    ids = before.ids[:kept] if before else []
    restart = before.merged[kept]["index"] if before and kept else 0
    merge([m for m in checked[restart:] if m is not None], merged)
    start = max(kept - 1, 0)
    seen: set[str] = set()
    if before is not None and start:
        seen = set(before.all_ids)  # those of the merged messages before ``start``:
        for own_ids in before.ids[start:]:
            seen.difference_update(own_ids)
    check_pairing(merged, start, seen)
    ids = ids[:start] + [
        [u["id"] for _, u in uses(m)] if m["role"] == "assistant" else [] for m in merged[start:]
    ]
    check_thinking_blocks(merged, thinking, ctx, start)

    head = _head(body, known)
    tokens = _tokens(head[2], sizes)
    if tokens > ctx.window:
        raise fail(f"prompt is too long: {tokens} tokens > {ctx.window} maximum")
    if ctx.window_counts_output and tokens + max_tokens > ctx.window:
        raise fail(
            f"input length and `max_tokens` exceed context limit: {tokens} + {max_tokens} > "
            f"{ctx.window}, decrease input length or `max_tokens` and try again"
        )
    accepted = _Accepted(
        messages,
        system_messages,
        checked,
        message_marks,
        marked,
        sizes,
        merged,
        ids,
        frozenset(seen),
        head,
    )
    return accepted, tokens, reuse


def _index(merged: dict[str, Any]) -> int:
    return merged["index"]


def _head(body: dict[str, Any], known: list[_Accepted]) -> tuple[Any, Any, int]:
    system, tools = body.get("system"), body.get("tools")
    for before in known:
        if before.head[0] == system and before.head[1] == tools:
            return before.head
    size = len(',"system":') + canonical_size(system) + len(',"tools":') + canonical_size(tools)
    return system, tools, size


def _tokens(head_size: int, sizes: list[tuple[int, int]]) -> int:
    """``count_input_tokens`` from the parts' own sizes: the JSON of
    ``{"messages": [...], "system": ..., "tools": ...}`` with sorted keys (images' data
    left out), and the images by their rule."""
    messages = sum(s for s, _ in sizes) + max(len(sizes) - 1, 0) + len('{"messages":[]')
    images = sum(i for _, i in sizes)
    return math.ceil((messages + head_size + len("}")) / 4) + images
