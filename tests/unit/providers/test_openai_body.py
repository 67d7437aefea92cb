"""Chat completions bodies joined from cached encodings say exactly what the parameter
conversion says, convert each message of a growing history once, and reach the server with
the key as a bearer token."""

from __future__ import annotations

import json
from typing import Any

import pytest
from providers_support import collect, make_request

from tether.core.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)
from tether.providers import openai_body
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec, WebSearchOptions
from tether.providers.convert_openai import request_messages, tool_params
from tether.providers.openai_body import ChatBodyEncoder

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [
    ToolSpec("Read", "Reads a file.", SCHEMA),
    ToolSpec("web_search", "", {}, server=WebSearchOptions(max_uses=2)),
]
SYSTEM = [SystemBlock("static", cache=True), SystemBlock("dynamic ü 中文")]


def history() -> list[Message]:
    use = ToolUseBlock(id="call_1", name="Read", input={"path": "a.py"})
    return [
        user_text("hello ü \u2028 \ud800 end"),
        Message(
            role="assistant", content=[ThinkingBlock(thinking="hm"), TextBlock(text="ok"), use]
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="call_1",
                    content=[
                        TextBlock(text="line"),
                        ImageBlock(media_type="image/png", data="aGk="),
                    ],
                    is_error=True,
                ),
                TextBlock(text="and also"),
                ImageBlock(media_type="image/png", data="aGk="),
            ],
        ),
        Message(role="assistant", content=[ThinkingBlock(thinking="only thinking")]),
        user_text("next"),
    ]


def request(messages: list[Message], tools: list[ToolSpec] = TOOLS) -> ModelRequest:
    return ModelRequest(
        model="qwen", system=SYSTEM, messages=messages, tools=tools, max_tokens=1000
    )


def expected(req: ModelRequest, *, max_tokens: int | None, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": req.model, "messages": request_messages(req)}
    tools = tool_params(req.tools)
    if tools:
        body["tools"] = tools
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    body["stream"] = stream
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def decoded(data: bytes) -> Any:
    return json.loads(data.decode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(("max_tokens", "stream"), [(None, True), (512, False)])
def test_the_body_is_the_conversion(max_tokens: int | None, stream: bool) -> None:
    req = request(history())
    body = ChatBodyEncoder().body(req, max_tokens=max_tokens, stream=stream)
    assert decoded(body) == json.loads(
        json.dumps(expected(req, max_tokens=max_tokens, stream=stream))
    )


def test_no_tools_no_system_no_messages() -> None:
    req = ModelRequest(model="m", system=[], messages=[], tools=TOOLS[1:], max_tokens=10)
    body = ChatBodyEncoder().body(req, max_tokens=None, stream=True)
    assert decoded(body) == {
        "model": "m",
        "messages": [],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_a_growing_history_converts_only_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    converted: list[Message] = []
    real = openai_body.message_params

    def counting(message: Message) -> Any:
        converted.append(message)
        return real(message)

    monkeypatch.setattr(openai_body, "message_params", counting)
    encoder = ChatBodyEncoder()
    messages = history()
    encoder.body(request(messages), max_tokens=None, stream=True)
    assert len(converted) == len(messages)
    messages += [
        Message(role="assistant", content=[TextBlock(text="more")]),
        user_text("again"),
    ]
    body = encoder.body(request(messages), max_tokens=None, stream=True)
    assert converted[-2:] == messages[-2:] and len(converted) == len(messages)
    assert decoded(body) == json.loads(
        json.dumps(expected(request(messages), max_tokens=None, stream=True))
    )
    # A replaced history (compaction: new objects from the start) is joined again.
    compacted = [user_text("summary"), *messages[-2:]]
    body = encoder.body(request(compacted), max_tokens=None, stream=True)
    assert decoded(body) == json.loads(
        json.dumps(expected(request(compacted), max_tokens=None, stream=True))
    )
    # A subagent's conversation and the main one do not evict each other.
    side = [user_text("subagent task")]
    encoder.body(request(side), max_tokens=None, stream=True)
    before = len(converted)
    encoder.body(request(compacted), max_tokens=None, stream=True)
    assert len(converted) == before


async def test_the_key_goes_as_a_bearer_token_with_a_json_body(
    openai_server: Any, openai_provider: Any
) -> None:
    server = openai_server([[{"type": "text", "text": "hi"}]])
    provider = openai_provider(server, api_key="sk-local")
    await collect(provider.stream(make_request()))
    server.assert_complete()
    (headers,) = [h for h in server.request_headers if h.get("content-type")]
    assert headers["authorization"] == "Bearer sk-local"
    assert headers["content-type"] == "application/json"
