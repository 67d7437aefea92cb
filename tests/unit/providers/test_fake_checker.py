"""The fake Messages API checks a conversation's next request for what is new; its verdict
must be the one a check of the whole body gives, whatever changed."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tether.providers.models import anthropic_limits
from tether.testing.anthropic_checker import RequestChecker, check_request
from tether.testing.anthropic_rules import RequestContext, count_input_tokens, sign

Body = dict[str, Any]
MARK = {"type": "ephemeral"}


def use(n: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": "ls"}}


def result(n: int, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": text}


def conversation(turns: int) -> Body:
    messages: list[Any] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for n in range(turns):
        thought = {"type": "thinking", "thinking": f"t{n}", "signature": sign(f"t{n}")}
        messages.append({"role": "assistant", "content": [thought, use(n)]})
        messages.append({"role": "user", "content": [result(n)]})
    messages[-1]["content"][-1]["cache_control"] = MARK
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4000,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": MARK}],
        "tools": [{"name": "Bash", "description": "Run.", "input_schema": {"type": "object"}}],
        "thinking": {"type": "adaptive"},
        "messages": messages,
    }


def next_turn(body: Body) -> Body:
    """The next request: one more round-trip, the cache mark moved to its end."""
    body = copy.deepcopy(body)
    for message in body["messages"]:
        for block in message["content"]:
            block.pop("cache_control", None)
    n = len(body["messages"]) // 2
    thought = {"type": "thinking", "thinking": f"t{n}", "signature": sign(f"t{n}")}
    body["messages"].append({"role": "assistant", "content": [thought, use(n)]})
    body["messages"].append({"role": "user", "content": [{**result(n), "cache_control": MARK}]})
    return body


def _at(i: int) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        body["messages"][i]["content"][0]["content"] = "altered"

    return change


CHANGES: dict[str, Callable[[Body], None]] = {
    "nothing": lambda b: None,
    "an earlier result altered": _at(4),
    "an earlier tool_use id repeated": lambda b: b["messages"][-2]["content"].__setitem__(
        1, use(3)
    ),
    "the new result answers an old use": lambda b: b["messages"][-1]["content"].__setitem__(
        0, result(2)
    ),
    "the new result dropped": lambda b: b["messages"].__setitem__(
        -1, {"role": "user", "content": [{"type": "text", "text": "hm"}]}
    ),
    "an empty text in the new message": lambda b: b["messages"][-1]["content"].append(
        {"type": "text", "text": ""}
    ),
    "a thinking block tampered with, far back": lambda b: b["messages"][3]["content"][
        0
    ].__setitem__("thinking", "edited"),
    "the newest thinking block tampered with": lambda b: b["messages"][-2]["content"][
        0
    ].__setitem__("thinking", "edited"),
    "five cache marks": lambda b: [
        m["content"][1].__setitem__("cache_control", MARK) for m in b["messages"][1:9:2]
    ],
    "an extra field in an old message": lambda b: b["messages"][2].__setitem__("name", "x"),
    "two user messages that merge": lambda b: b["messages"].append(
        {"role": "user", "content": [{"type": "text", "text": "and also"}]}
    ),
    "the last user message split in two": lambda b: b["messages"].__setitem__(
        slice(-1, None), [b["messages"][-1], {"role": "user", "content": "more"}]
    ),
    "history cut to a prefix": lambda b: b["messages"].__delitem__(slice(7, None)),
    "a message removed from the middle": lambda b: b["messages"].__delitem__(4),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_checking_what_is_new_gives_the_verdict_of_the_whole(change: str) -> None:
    ctx = RequestContext(anthropic_limits("claude-sonnet-4-6"), 200_000)
    checker = RequestChecker()
    first = conversation(6)
    assert checker.check(first, ctx).error is None
    body = next_turn(first)
    CHANGES[change](body)
    body = json.loads(json.dumps(body))  # as the server parses it: nothing shared
    whole = check_request(body, ctx)
    verdict = checker.check(body, ctx)
    assert (verdict.error and verdict.error.message) == (whole and whole.message), change
    if whole is None:
        assert verdict.tokens == count_input_tokens(body)
        if change == "nothing":
            assert verdict.first_new == len(first["messages"]) - 1  # only the new part
    else:
        assert change != "nothing"


def test_tokens_of_a_request_checked_in_parts_are_those_of_the_whole() -> None:
    ctx = RequestContext(anthropic_limits("claude-sonnet-4-6"), 200_000)
    checker = RequestChecker()
    body = conversation(1)
    for _ in range(30):
        verdict = checker.check(body, ctx)
        assert verdict.error is None and verdict.tokens == count_input_tokens(body)
        body = next_turn(body)
    assert verdict.first_new > 50
