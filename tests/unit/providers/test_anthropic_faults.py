"""AnthropicProvider recovering from (or reporting) the faults the fake API plays."""

from __future__ import annotations

import socket

import pytest
from providers_support import collect, make_request

from tether.core.messages import Message, TextBlock, ToolUseBlock
from tether.errors import ModelError, PromptTooLongError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import (
    Completed,
    Retrying,
    StreamEvent,
    StreamReset,
    TextDelta,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)

OK = [{"type": "text", "text": "ok"}]
READ = {"type": "tool_use", "name": "Read", "input": {"file_path": "src/long/path/module.py"}}


def _ok_completed(input_tokens: int) -> Completed:
    """The fake counts input tokens by its documented rule (fake_anthropic's docstring)."""
    return Completed(
        Message(role="assistant", content=[TextBlock(text="ok")]),
        "end_turn",
        TokenUsage(input_tokens, 20),
    )


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("429", "rate limited (429)"), ("529", "overloaded (529)"), ("500", "API error (500)")],
)
async def test_status_faults_are_retried_visibly(
    fault, reason, anthropic_server, anthropic_provider
):
    server = anthropic_server([{"fault": fault}, OK])
    events = await collect(anthropic_provider(server).stream(make_request()))

    retrying = events[0]
    assert isinstance(retrying, Retrying)
    assert (retrying.attempt, retrying.reason) == (1, reason)
    if fault in ("429", "529"):
        assert retrying.delay_s == pytest.approx(0.010)  # from retry-after-ms
    else:
        assert 0.0075 <= retrying.delay_s <= 0.01  # base delay with downward jitter
    assert events[1:] == [TextDelta("o"), TextDelta("k"), _ok_completed(server.input_tokens[-1])]
    assert len(server.requests) == 2
    server.assert_complete()


async def test_overloaded_mid_stream_falls_back_to_one_plain_request(
    anthropic_server, anthropic_provider
):
    server = anthropic_server(
        [
            {
                "fault": "overloaded_mid_stream",
                "blocks": [{"type": "text", "text": "Partial answer"}],
            },
            [{"type": "text", "text": "Full answer"}],
        ]
    )
    events = await collect(anthropic_provider(server).stream(make_request()))

    assert events == [
        TextDelta("Parti"),
        StreamReset("stream error: overloaded_error: Overloaded"),
        TextDelta("Full answer"),
        Completed(
            Message(role="assistant", content=[TextBlock(text="Full answer")]),
            "end_turn",
            TokenUsage(server.input_tokens[-1], 20),
        ),
    ]
    assert server.requests[0]["stream"] is True
    assert not server.requests[1].get("stream")
    server.assert_complete()


async def test_cut_mid_tool_input_falls_back_with_the_input_intact(
    anthropic_server, anthropic_provider
):
    server = anthropic_server(
        [
            {"fault": "cut_mid_tool_input", "blocks": [{"type": "text", "text": "Reading."}, READ]},
            [{"type": "text", "text": "Reading."}, READ],
        ]
    )
    events = await collect(anthropic_provider(server).stream(make_request()))

    reset = next(i for i, e in enumerate(events) if isinstance(e, StreamReset))
    assert "incomplete chunked read" in events[reset].reason
    assert events[reset - 1] == ToolUseStarted("toolu_0000_01", "Read")
    assert not any(isinstance(e, ToolUseReady) for e in events[:reset])
    use = ToolUseBlock(id="toolu_0001_01", name="Read", input=READ["input"])
    assert events[reset + 1 :] == [
        TextDelta("Reading."),
        ToolUseStarted(use.id, use.name),
        ToolUseReady(use),
        Completed(
            Message(role="assistant", content=[TextBlock(text="Reading."), use]),
            "tool_use",
            TokenUsage(server.input_tokens[-1], 20),
        ),
    ]
    server.assert_complete()


async def test_cut_mid_text_then_a_retried_fallback(anthropic_server, anthropic_provider):
    server = anthropic_server(
        [
            {"fault": "cut_mid_text", "blocks": [{"type": "text", "text": "Some long text"}]},
            {"fault": "529"},
            OK,
        ]
    )
    events = await collect(anthropic_provider(server).stream(make_request()))

    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TextDelta", "StreamReset", "Retrying", "TextDelta", "Completed"]
    assert events[0] == TextDelta("Some ")
    assert events[3:] == [TextDelta("ok"), _ok_completed(server.input_tokens[-1])]  # replayed whole
    server.assert_complete()


async def test_prompt_too_long_is_not_retried(anthropic_server, anthropic_provider):
    server = anthropic_server([{"fault": "prompt_too_long"}])
    with pytest.raises(PromptTooLongError, match=r"prompt is too long: 1000001 tokens > 1000000"):
        await collect(anthropic_provider(server).stream(make_request()))
    assert len(server.requests) == 1
    server.assert_complete()


async def test_exhausted_retries_raise_a_retryable_model_error(
    anthropic_server, anthropic_provider
):
    server = anthropic_server([{"fault": "529"}] * 3)
    events: list[StreamEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in anthropic_provider(server, max_retries=2).stream(make_request()):
            events.append(event)
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [1, 2]
    assert caught.value.retryable
    assert caught.value.status == 529
    assert "gave up after 2 retries" in str(caught.value)
    server.assert_complete()


async def test_connection_refused_is_retried_then_reported(anthropic_server):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = AnthropicProvider(
        "claude-sonnet-4-6",
        api_key="k",
        base_url=f"http://127.0.0.1:{port}",
        max_retries=1,
        base_delay_s=0.01,
    )
    events: list[StreamEvent] = []
    try:
        with pytest.raises(ModelError, match="connection error") as caught:
            async for event in provider.stream(make_request()):
                events.append(event)
    finally:
        await provider.aclose()
    assert caught.value.retryable
    assert len(events) == 1
    assert isinstance(events[0], Retrying)
    assert events[0].reason.startswith("connection error")


async def test_a_failed_expectation_is_reported_without_retry(anthropic_server, anthropic_provider):
    server = anthropic_server([{"blocks": OK, "expect": {"contains": "needle"}}])
    with pytest.raises(
        ModelError, match="expected the last user message to contain 'needle'"
    ) as caught:
        await collect(anthropic_provider(server).stream(make_request()))
    assert not caught.value.retryable  # the fake says x-should-retry: false
    assert len(server.requests) == 1
    assert server.errors == ["turn 1: expected the last user message to contain 'needle'"]


def test_other_4xx_become_model_errors_with_the_api_message():
    import anthropic
    import httpx2

    from tether.providers.anthropic import _classify

    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad tool"}}
    response = httpx2.Response(
        400, json=body, request=httpx2.Request("POST", "http://x/v1/messages")
    )
    failure = _classify(anthropic.BadRequestError("Error code: 400", response=response, body=body))
    assert failure is not None
    assert not failure.retryable
    assert str(failure.error) == "Anthropic API error 400: bad tool"
    assert failure.error.status == 400
    assert _classify(ValueError("a bug")) is None  # programmer errors propagate
