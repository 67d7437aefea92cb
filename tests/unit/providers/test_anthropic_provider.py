"""AnthropicProvider against the fake Messages API: streaming, conversion, caching."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from providers_support import READ_TOOL, collect, env_with_tether, make_request

from tether.core.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_result,
    user_text,
)
from tether.providers.base import (
    Completed,
    SystemBlock,
    TextDelta,
    ThinkingDelta,
    TokenUsage,
    ToolSpec,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.convert_anthropic import request_params
from tether.providers.models import ModelOptions

EPHEMERAL = {"type": "ephemeral"}


async def test_streams_text_and_tool_use_as_exact_events(anthropic_server, anthropic_provider):
    usage = {
        "input_tokens": 50,
        "output_tokens": 12,
        "cache_read_input_tokens": 30,
        "cache_creation_input_tokens": 7,
    }
    server = anthropic_server(
        [
            {
                "blocks": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "name": "Read", "input": {"file_path": "src/app.py"}},
                ],
                "usage": usage,
            }
        ]
    )
    events = await collect(anthropic_provider(server).stream(make_request()))

    use = ToolUseBlock(id="toolu_0000_01", name="Read", input={"file_path": "src/app.py"})
    assert events == [
        TextDelta("Let "),
        TextDelta("me l"),
        TextDelta("ook."),
        ToolUseStarted("toolu_0000_01", "Read"),
        ToolUseReady(use),
        Completed(
            Message(role="assistant", content=[TextBlock(text="Let me look."), use]),
            "tool_use",
            TokenUsage(
                input_tokens=50, output_tokens=12, cache_read_tokens=30, cache_creation_tokens=7
            ),
        ),
    ]
    body = server.requests[0]
    assert body["stream"] is True
    assert body["model"] == "claude-sonnet-4-6"
    assert body["tools"][0]["name"] == "Read"
    assert body["tools"][0]["input_schema"] == READ_TOOL.input_schema
    server.assert_complete()


async def test_thinking_with_signature_round_trips(anthropic_server, anthropic_provider):
    server = anthropic_server(
        [
            [
                {"type": "thinking", "thinking": "The file is small."},
                {"type": "tool_use", "name": "Read", "input": {"file_path": "a.py"}},
            ],
            {"blocks": [{"type": "text", "text": "Done."}], "expect": {"contains": "print(1)"}},
        ]
    )
    provider = anthropic_provider(server)
    first = await collect(provider.stream(make_request()))
    assert [e for e in first if isinstance(e, ThinkingDelta)] == [
        ThinkingDelta("The fi"),
        ThinkingDelta("le is "),
        ThinkingDelta("small."),
    ]
    completed = first[-1]
    assert isinstance(completed, Completed)
    thinking = completed.message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "The file is small."
    assert thinking.signature  # the fake signs like the API

    history = [
        user_text("hello"),
        completed.message,
        Message(role="user", content=[tool_result("toolu_0000_01", "print(1)")]),
    ]
    await collect(provider.stream(make_request(history)))
    sent = server.requests[1]["messages"][1]["content"]
    assert sent[0] == {
        "type": "thinking",
        "thinking": "The file is small.",
        "signature": thinking.signature,
    }
    assert sent[1] == {
        "type": "tool_use",
        "id": "toolu_0000_01",
        "name": "Read",
        "input": {"file_path": "a.py"},
    }
    server.assert_complete()


async def test_cache_breakpoints_in_the_request_body(anthropic_server, anthropic_provider):
    server = anthropic_server([[{"type": "text", "text": "ok"}]])
    glob = ToolSpec("Glob", "Find files.", {"type": "object"})
    history = [
        user_text("q1"),
        Message(
            role="assistant",
            content=[
                TextBlock(text="Reading."),
                ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "a.py"}),
            ],
        ),
        Message(role="user", content=[tool_result("toolu_1", "contents"), TextBlock(text="go")]),
    ]
    request = make_request(
        history,
        system=[SystemBlock("static prompt", cache=True), SystemBlock("dynamic: cwd=/x")],
        tools=[READ_TOOL, glob],
    )
    await collect(anthropic_provider(server).stream(request))

    body = server.requests[0]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == EPHEMERAL
    assert body["system"] == [
        {"type": "text", "text": "static prompt", "cache_control": EPHEMERAL},
        {"type": "text", "text": "dynamic: cwd=/x"},
    ]
    last = body["messages"][-1]["content"]
    assert last[-1] == {"type": "text", "text": "go", "cache_control": EPHEMERAL}
    assert "cache_control" not in last[0]
    flat = [b for m in body["messages"] for b in m["content"]]
    assert sum("cache_control" in b for b in flat) == 1


def test_cache_history_off_puts_no_breakpoint_on_messages():
    params = request_params(make_request(cache_history=False), max_tokens=100)
    assert all("cache_control" not in b for m in params.messages for b in m["content"])


def test_more_than_four_breakpoints_is_a_programmer_error():
    system = [SystemBlock(f"part {i}", cache=True) for i in range(4)]
    with pytest.raises(AssertionError, match="cache breakpoints"):
        request_params(make_request(system=system), max_tokens=100)


def test_breakpoint_skips_a_trailing_thinking_block():
    prefill = Message(
        role="assistant",
        content=[TextBlock(text="So far"), ThinkingBlock(thinking="hm", signature="sig")],
    )
    params = request_params(make_request([user_text("q"), prefill]), max_tokens=100)
    content = list(params.messages[-1]["content"])
    assert content[0].get("cache_control") == EPHEMERAL
    assert "cache_control" not in content[1]


async def test_converts_tool_results_images_and_drops_unsigned_thinking(
    anthropic_server, anthropic_provider
):
    server = anthropic_server([[{"type": "text", "text": "ok"}]])
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        Message(role="user", content=[TextBlock(text="see"), image]),
        Message(
            role="assistant",
            content=[
                ThinkingBlock(thinking="from another provider"),  # no signature: dropped
                ToolUseBlock(id="toolu_9", name="Read", input={"file_path": "shot.png"}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="toolu_9", content=[TextBlock(text="failed"), image], is_error=True
                )
            ],
        ),
    ]
    await collect(anthropic_provider(server).stream(make_request(history, cache_history=False)))

    source = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    assert server.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "see"}, {"type": "image", "source": source}],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "Read",
                    "input": {"file_path": "shot.png"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_9",
                    "content": [
                        {"type": "text", "text": "failed"},
                        {"type": "image", "source": source},
                    ],
                    "is_error": True,
                }
            ],
        },
    ]


async def test_max_tokens_cuts_a_tool_input(anthropic_server, anthropic_provider):
    server = anthropic_server(
        [
            {
                "stop_reason": "max_tokens",
                "blocks": [
                    {"type": "text", "text": "Writing."},
                    {"type": "tool_use", "name": "Write", "input": {"content": "x" * 40}},
                ],
            }
        ]
    )
    events = await collect(anthropic_provider(server).stream(make_request()))
    ready = [e for e in events if isinstance(e, ToolUseReady)]
    assert ready == [
        ToolUseReady(ToolUseBlock(id="toolu_0000_01", name="Write", input={}, truncated=True))
    ]
    completed = events[-1]
    assert isinstance(completed, Completed)
    assert completed.stop_reason == "max_tokens"
    assert completed.message.tool_uses[0].truncated


async def test_request_max_tokens_is_capped(anthropic_server, anthropic_provider):
    server = anthropic_server([[{"type": "text", "text": "ok"}]])
    options = ModelOptions(max_output_tokens=1000)
    await collect(anthropic_provider(server, options=options).stream(make_request()))
    assert server.requests[0]["max_tokens"] == 1000


def test_the_sdks_are_imported_lazily():
    code = (
        "import sys, tether.providers.anthropic, tether.providers.openai_compat;"
        "print('anthropic' in sys.modules, 'openai' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env_with_tether(),
        timeout=30,
    )
    assert out.stdout.split() == ["False", "False"]


async def test_stopping_early_closes_the_http_stream(anthropic_server, anthropic_provider):
    server = anthropic_server(
        [{"blocks": [{"type": "text", "text": "x" * 30}], "chunk_delay_ms": 20}]
    )
    events = anthropic_provider(server).stream(make_request())
    assert isinstance(await anext(events), TextDelta)
    await events.aclose()  # what cancelling a turn does to the stream
    deadline = asyncio.get_running_loop().time() + 5
    while not server.response_end_times:  # the server notices the client went away
        assert asyncio.get_running_loop().time() < deadline, "the connection was not closed"
        await asyncio.sleep(0.01)
    assert server.errors == []
