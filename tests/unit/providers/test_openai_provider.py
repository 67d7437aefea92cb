"""OpenAICompatProvider against the fake chat-completions server."""

from __future__ import annotations

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
from tether.errors import ModelError, PromptTooLongError
from tether.providers.base import (
    Completed,
    Retrying,
    StreamEvent,
    StreamReset,
    SystemBlock,
    TextDelta,
    ThinkingDelta,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.convert_openai import stop_reason
from tether.providers.models import ModelOptions

READ = {"type": "tool_use", "name": "Read", "input": {"file_path": "src/long/path/module.py"}}
GLOB = {"type": "tool_use", "name": "Glob", "input": {"pattern": "**/*.py"}}


async def test_streams_text_and_tool_calls_as_exact_events(openai_server, openai_provider):
    usage = {"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 60}
    server = openai_server(
        [{"blocks": [{"type": "text", "text": "Let me look."}, READ, GLOB], "usage": usage}]
    )
    events = await collect(openai_provider(server).stream(make_request()))

    read = ToolUseBlock(id="toolu_0000_01", name="Read", input=READ["input"])
    glob = ToolUseBlock(id="toolu_0000_02", name="Glob", input=GLOB["input"])
    assert events == [
        TextDelta("Let "),
        TextDelta("me l"),
        TextDelta("ook."),
        ToolUseStarted(read.id, "Read"),
        # The second call's first delta completes the first.
        ToolUseReady(read),
        ToolUseStarted(glob.id, "Glob"),
        ToolUseReady(glob),
        Completed(
            Message(role="assistant", content=[TextBlock(text="Let me look."), read, glob]),
            "tool_use",
            TokenUsage(input_tokens=40, output_tokens=9, cache_read_tokens=60),
        ),
    ]
    body = server.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "max_tokens" not in body  # no cap configured: the server uses the room left
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
            },
        }
    ]
    server.assert_complete()


async def test_tolerates_a_server_without_usage(openai_server, openai_provider):
    server = openai_server([[{"type": "text", "text": "hi"}]], send_usage=False)
    events = await collect(openai_provider(server).stream(make_request()))
    assert events[-1] == Completed(
        Message(role="assistant", content=[TextBlock(text="hi")]), "end_turn", TokenUsage()
    )


async def test_reasoning_content_becomes_thinking(openai_server, openai_provider):
    server = openai_server(
        [[{"type": "thinking", "thinking": "abc"}, {"type": "text", "text": "x"}]]
    )
    events = await collect(openai_provider(server).stream(make_request()))
    assert [e for e in events if isinstance(e, ThinkingDelta)] == [
        ThinkingDelta("a"),
        ThinkingDelta("b"),
        ThinkingDelta("c"),
    ]
    completed = events[-1]
    assert isinstance(completed, Completed)
    assert completed.message.content[0] == ThinkingBlock(thinking="abc")


async def test_converts_the_conversation(openai_server, openai_provider):
    server = openai_server([[{"type": "text", "text": "ok"}]])
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        Message(role="user", content=[TextBlock(text="see"), image]),
        Message(
            role="assistant",
            content=[
                ThinkingBlock(thinking="hidden", signature="sig"),
                TextBlock(text="Reading both."),
                ToolUseBlock(id="call_1", name="Read", input={"file_path": "a.py"}),
                ToolUseBlock(id="call_2", name="Read", input={"file_path": "shot.png"}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="call_1", content=[TextBlock(text="no such file")], is_error=True
                ),
                ToolResultBlock(tool_use_id="call_2", content=[TextBlock(text="a chart"), image]),
                TextBlock(text="and then?"),
            ],
        ),
    ]
    system = [SystemBlock("static", cache=True), SystemBlock("dynamic")]
    await collect(openai_provider(server).stream(make_request(history, system=system)))

    assert server.requests[0]["messages"] == [
        {"role": "system", "content": "static\n\ndynamic"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
        {
            "role": "assistant",
            "content": "Reading both.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "Read", "arguments": '{"file_path": "a.py"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "Read", "arguments": '{"file_path": "shot.png"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "[tool error] no such file"},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": "a chart\n[1 image(s) omitted: this endpoint takes text-only tool results]",
        },
        {"role": "user", "content": "and then?"},
    ]


async def test_max_output_tokens_caps_the_request(openai_server, openai_provider):
    server = openai_server([[{"type": "text", "text": "ok"}]])
    options = ModelOptions(max_output_tokens=500)
    await collect(openai_provider(server, options=options).stream(make_request()))
    assert server.requests[0]["max_tokens"] == 500


@pytest.mark.parametrize(("fault", "status"), [("429", 429), ("500", 500), ("529", 503)])
async def test_status_faults_are_retried(fault, status, openai_server, openai_provider):
    server = openai_server([{"fault": fault}, [{"type": "text", "text": "ok"}]])
    events = await collect(openai_provider(server).stream(make_request()))
    assert isinstance(events[0], Retrying)
    assert events[0].reason.endswith(f"({status})")
    assert isinstance(events[-1], Completed)
    assert events[-1].message.text == "ok"
    server.assert_complete()


async def test_cut_mid_tool_input_falls_back_with_the_input_intact(openai_server, openai_provider):
    server = openai_server([{"fault": "cut_mid_tool_input", "blocks": [READ]}, [READ]])
    events = await collect(openai_provider(server).stream(make_request()))

    assert isinstance(events[1], StreamReset)
    use = ToolUseBlock(id="toolu_0001_00", name="Read", input=READ["input"])
    assert events == [
        ToolUseStarted("toolu_0000_00", "Read"),
        events[1],
        ToolUseStarted(use.id, "Read"),
        ToolUseReady(use),
        Completed(
            Message(role="assistant", content=[use]),
            "tool_use",
            TokenUsage(server.prompt_tokens[-1], 20),
        ),
    ]
    assert "stream" not in server.requests[1] or server.requests[1]["stream"] is False
    server.assert_complete()


async def test_error_chunk_mid_stream_falls_back(openai_server, openai_provider):
    server = openai_server(
        [
            {"fault": "overloaded_mid_stream", "blocks": [{"type": "text", "text": "abc"}]},
            [{"type": "text", "text": "full"}],
        ]
    )
    events = await collect(openai_provider(server).stream(make_request()))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TextDelta"] * 3 + ["StreamReset", "TextDelta", "Completed"]
    assert "overloaded" in events[3].reason
    server.assert_complete()


async def test_context_length_error_is_prompt_too_long(openai_server, openai_provider):
    server = openai_server([{"fault": "prompt_too_long"}])
    with pytest.raises(PromptTooLongError, match="maximum context length"):
        await collect(openai_provider(server).stream(make_request()))
    assert len(server.requests) == 1


async def test_exhausted_retries(openai_server, openai_provider):
    server = openai_server([{"fault": "500"}] * 2)
    events: list[StreamEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in openai_provider(server, max_retries=1).stream(make_request()):
            events.append(event)
    assert caught.value.retryable
    assert [type(e).__name__ for e in events] == ["Retrying"]
    # The user's setting is the URL: the error names it (and the status and the cause).
    assert f"(model server at {server.base_url}: error 500: " in str(caught.value)


async def test_length_cuts_a_tool_call(openai_server, openai_provider):
    server = openai_server(
        [{"stop_reason": "max_tokens", "blocks": [{"type": "text", "text": "hm"}, READ]}]
    )
    events = await collect(openai_provider(server).stream(make_request([user_text("go")])))
    ready = [e for e in events if isinstance(e, ToolUseReady)]
    assert ready == [
        ToolUseReady(ToolUseBlock(id="toolu_0000_01", name="Read", input={}, truncated=True))
    ]
    assert isinstance(events[-1], Completed)
    assert events[-1].stop_reason == "max_tokens"


def test_finish_reason_mapping():
    assert stop_reason("stop", has_tool_calls=False) == "end_turn"
    assert stop_reason("stop", has_tool_calls=True) == "tool_use"  # older Ollama
    assert stop_reason("tool_calls", has_tool_calls=True) == "tool_use"
    assert stop_reason("length", has_tool_calls=False) == "max_tokens"
    assert stop_reason("content_filter", has_tool_calls=False) == "refusal"
    assert stop_reason(None, has_tool_calls=False) == "end_turn"


def test_api_key_defaults(monkeypatch):
    from tether.providers.openai_compat import OpenAICompatProvider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OpenAICompatProvider("m", base_url="http://x/v1")._api_key == "not-needed"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAICompatProvider("m", base_url="http://x/v1")._api_key == "sk-env"
    assert OpenAICompatProvider("m", base_url="http://x/v1", api_key="sk-arg")._api_key == "sk-arg"


async def test_a_model_the_server_does_not_serve_names_the_url_and_the_fix(
    openai_server, openai_provider
):
    server = openai_server([], flavor="ollama", served_model="qwen2.5-coder:14b")
    with pytest.raises(ModelError) as caught:
        await collect(openai_provider(server).stream(make_request()))
    said = str(caught.value)
    assert f"model server at {server.base_url}: error 404" in said and "not found" in said
    assert "serves this model" in said and "ending in /v1" in said
