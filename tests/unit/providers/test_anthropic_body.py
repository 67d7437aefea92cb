"""Request bodies joined from cached encodings say exactly what the parameter conversion
says, and reuse the encodings of a growing history."""

from __future__ import annotations

import json
from typing import Any, Literal

from tether.core.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_result,
    user_text,
)
from tether.engine.context import MergedHistory, merge_consecutive
from tether.providers import anthropic_body
from tether.providers.anthropic_body import BodyEncoder
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec, WebSearchOptions
from tether.providers.convert_anthropic import request_params

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [
    ToolSpec("Read", "Reads a file.", SCHEMA),
    ToolSpec("web_search", "", {}, server=WebSearchOptions(max_uses=2)),
]
SYSTEM = [SystemBlock("static", cache=True), SystemBlock("dynamic ü 中文", cache=True)]


def history() -> list[Message]:
    use = ToolUseBlock(id="toolu_1", name="Read", input={"path": "a.py"})
    return [
        user_text("hello ü \u2028 \ud800 end"),
        Message(
            role="assistant",
            content=[
                ThinkingBlock(thinking="hm", signature="sig"),
                ThinkingBlock(thinking="unsigned"),
                TextBlock(text="   "),
                use,
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="toolu_1",
                    content=[
                        TextBlock(text="line"),
                        TextBlock(text=""),
                        ImageBlock(media_type="image/png", data="aGk="),
                        DocumentBlock(data="JVBE", title="spec"),
                    ],
                    is_error=True,
                )
            ],
        ),
        Message(
            role="assistant",
            content=[
                ServerToolUseBlock(id="srv_1", name="web_search", input={"query": "q"}),
                TextBlock(text="found"),
            ],
        ),
        Message(role="assistant", content=[TextBlock(text="")]),
        user_text("next"),
        Message(role="assistant", content=[RedactedThinkingBlock(data="xyz")]),
    ]


def expected(request: ModelRequest, *, stream: bool = True) -> dict[str, Any]:
    params = request_params(request, max_tokens=1000, thinking={"type": "adaptive"})
    body: dict[str, Any] = {
        "model": params.model,
        "max_tokens": params.max_tokens,
        "stream": stream,
        "messages": params.messages,
        "thinking": params.thinking,
    }
    if params.system:
        body["system"] = params.system
    if params.tools:
        body["tools"] = params.tools
    return json.loads(json.dumps(body))


def body(encoder: BodyEncoder, request: ModelRequest, *, stream: bool = True) -> dict[str, Any]:
    raw = encoder.body(request, max_tokens=1000, thinking={"type": "adaptive"}, stream=stream)
    return json.loads(raw)


def make(messages: list[Message], **kw: Any) -> ModelRequest:
    return ModelRequest("claude-sonnet-4-6", SYSTEM, messages, TOOLS, **kw)


def test_body_is_the_converted_request_for_every_prefix_of_a_history():
    encoder = BodyEncoder()
    messages = history()
    for end in range(1, len(messages) + 1):
        request = make(messages[:end])
        assert body(encoder, request) == expected(request)
        assert body(encoder, request, stream=False) == expected(request, stream=False)


def test_without_history_caching_no_message_is_marked():
    request = make(history(), cache_history=False)
    sent = body(BodyEncoder(), request)
    assert sent == expected(request)
    assert "cache_control" not in json.dumps(sent["messages"])


def test_request_without_system_tools_or_messages():
    request = ModelRequest("claude-sonnet-4-6", [], [Message(role="user", content=[])], [])
    sent = body(BodyEncoder(), request)
    assert sent == expected(request)
    assert sent["messages"] == []
    assert "tools" not in sent and "system" not in sent


def test_a_growing_history_encodes_each_message_once(monkeypatch):
    encoded: list[str] = []
    real = anthropic_body.encode

    def counting(value: Any) -> bytes:
        if isinstance(value, dict) and value.get("type") != "adaptive":  # not the thinking config
            encoded.append(str(value.get("type")))
        return real(value)

    monkeypatch.setattr(anthropic_body, "encode", counting)
    encoder = BodyEncoder()
    messages = [user_text("go")]
    for i in range(50):
        use = ToolUseBlock(id=f"toolu_{i}", name="Read", input={"path": f"{i}.py"})
        messages.append(Message(role="assistant", content=[use]))
        messages.append(Message(role="user", content=[tool_result(use.id, f"result {i}")]))
        encoded.clear()
        request = make(list(messages))
        assert body(encoder, request) == expected(request)
        # The new messages once each; the newest's breakpoint is added to what was encoded.
        assert encoded == (
            ["tool_result", "text", "tool_use"] if i == 0 else ["tool_result", "tool_use"]
        ), encoded


def test_a_rewritten_history_is_noticed():
    encoder = BodyEncoder()
    messages = history()
    body(encoder, make(messages))
    rewritten = [user_text("summary"), *messages[1:]]
    assert body(encoder, make(rewritten)) == expected(make(rewritten))
    messages[2] = Message(role="user", content=[tool_result("toolu_1", "cleared")])
    assert body(encoder, make(messages)) == expected(make(messages))
    shorter = messages[:3]
    assert body(encoder, make(shorter)) == expected(make(shorter))


def test_conversations_sharing_an_encoder_do_not_mix():
    encoder = BodyEncoder()
    main, side = history(), [user_text("summarise this"), user_text("please")]
    for _ in range(3):
        assert body(encoder, make(main)) == expected(make(main))
        assert body(encoder, make(merge_consecutive(side))) == expected(
            make(merge_consecutive(side))
        )
        main = [*main, user_text(f"more {len(main)}")]


def test_merged_history_matches_merge_consecutive_and_keeps_merged_objects():
    merged = MergedHistory()
    messages: list[Message] = []
    results = Message(role="user", content=[tool_result("t1", "ok")])
    roles_and_texts: list[tuple[Literal["user", "assistant"], str | None]] = [
        ("user", "a"),
        ("user", "b"),
        ("assistant", "c"),
        ("user", None),
        ("user", "d"),
        ("assistant", "e"),
        ("assistant", "f"),
        ("user", "g"),
    ]
    previous: list[Message] = []
    for role, text in roles_and_texts:
        if text is None:
            messages.append(results)
        else:
            messages.append(Message(role=role, content=[TextBlock(text=text)]))
        out = merged.merge(messages)
        assert [m.model_dump() for m in out] == [
            m.model_dump() for m in merge_consecutive(messages)
        ]
        # Groups that can no longer change are the very objects of the previous request.
        for old, new in zip(previous[:-1], out, strict=False):
            assert old is new
        previous = out
    # The attachment after the tool results was merged behind them, results first.
    assert [b.type for b in previous[2].content] == ["tool_result", "text"]
    replaced = [user_text("summary"), *messages[3:]]
    assert [m.model_dump() for m in merged.merge(replaced)] == [
        m.model_dump() for m in merge_consecutive(replaced)
    ]
