"""The fakes' body parser gives what ``json.loads`` gives (or its error), while reusing the
parsed messages a conversation's earlier bodies already had."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether.testing.body_parser import BodyParser


def same(parser: BodyParser, raw: bytes) -> Any:
    try:
        expected: Any = json.loads(raw or b"null")
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            parser.loads(raw)
        assert str(got.value) == str(e)
        return None
    value = parser.loads(raw)
    assert value == expected and type(value) is type(expected)
    assert json.dumps(value) == json.dumps(expected)  # key order too
    return value


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for n in range(turns):
        use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"echo {n}"}}
        messages.append({"role": "assistant", "content": [use]})
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"{n}\n"}
        messages.append({"role": "user", "content": [result]})
    return messages


def body(messages: list[dict[str, Any]], **extra: Any) -> bytes:
    marked = [*messages[:-1], {**messages[-1], "cache_control": {"type": "ephemeral"}}]
    return json.dumps(
        {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": marked, **extra},
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()


def test_a_growing_conversation_reuses_what_it_parsed_before() -> None:
    parser = BodyParser()
    first = same(parser, body(conversation(3)))
    second = same(parser, body(conversation(4)))
    # The shared history is the very objects parsed before; the moved cache mark is new.
    assert all(a is b for a, b in zip(first["messages"][:-1], second["messages"][:6], strict=True))
    assert second["messages"][6] is not first["messages"][6]
    # A history that changed before its end (a rewind, a compaction) is parsed again.
    third = same(parser, body([*conversation(4)[:3], {"role": "user", "content": "edited"}]))
    assert third["messages"][0] is not second["messages"][0]
    # Another conversation shares nothing.
    other = same(parser, body([{"role": "user", "content": "else"}]))
    assert other["messages"][0] is not first["messages"][0]


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"null",
        b"[]",
        b"{}",
        b' \n{ "messages" : [ {"a":1} , {"b":[2]} ] , "model":"m" } \n',
        b'{"messages":[{"a":1}],"messages":[{"b":2}]}',  # duplicate keys: the last wins
        b'{"messages":[]}',
        b'{"messages":[1,2]}',
        b'{"messages":[{"a":1}2]}',
        b'{"messages":[{"a":1}],}',
        b'{"messages":[{"a":1}]} x',
        b'{"messages":[{"a":NaN}],"n":Infinity}',
        b'{"messages":[{"t":"\\u00e9\\ud83d\\ude00"}]}',
        b'{"messages":[{"t":"tab\there"}]}',  # a raw control character: refused
        '{"messages":[{"t":"é"}]}'.encode("utf-16"),
        b'{"messages":[{"t":"\xff"}]}',
        b'{"tools":[{"input_schema":{"messages":[{"x":1}]}}],"messages":[{"x":1}]}',
        b'{"messages":{"not":"a list"}}',
        b'{"a":1',
    ],
)
def test_every_body_parses_as_json_loads_would(raw: bytes) -> None:
    parser = BodyParser()
    same(parser, b'{"messages":[{"a":1},{"b":[2]},{"x":1}]}')  # something to reuse
    same(parser, raw)
    same(parser, raw)  # and again, now with its own elements known
