"""The waits of a model request (``providers/patience``, ``providers/watch``): a server that
takes the request and sends nothing, or stalls after the headers or in the middle of the
answer, is given up after the wait, with the URL, the wait and the variable that raises it;
while it waits, ``Waiting`` events say so. Real SDKs against real sockets, small waits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from providers_support import make_request

from tether.errors import ConfigError, ModelError
from tether.providers.base import Completed, StreamEvent, StreamReset, TextDelta, Waiting
from tether.providers.models import ModelOptions
from tether.providers.patience import (
    DEFAULT_FIRST_ANSWER_S,
    DEFAULT_IDLE_S,
    Patience,
)
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.silent import SilentServer

WAITS = ModelOptions(patience=Patience(first_answer_s=0.6, idle_s=0.4), context_window=32_000)


async def run(provider: Any) -> tuple[list[StreamEvent], ModelError | None]:
    events: list[StreamEvent] = []
    try:
        async for event in provider.stream(make_request()):
            events.append(event)
    except ModelError as e:
        return events, e
    return events, None


@pytest.mark.parametrize("answer", ["nothing", "headers"])
@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_server_that_sends_nothing_is_given_up_once_with_the_fix(
    kind: str,
    answer: Any,
    anthropic_provider: Callable[..., Any],
    openai_provider: Callable[..., Any],
) -> None:
    with SilentServer(answer) as server:
        make = anthropic_provider if kind == "anthropic" else openai_provider
        url = server.url if kind == "anthropic" else f"{server.url}/v1"

        class At:
            base_url = url

        events, error = await run(make(At(), options=WAITS))
        requests = server.requests
    assert error is not None, events
    said = str(error)
    assert f"{url} took the request but sent nothing for 0.6 s" in said
    assert "API_TIMEOUT_MS" in said and "milliseconds" in said
    assert requests == 1  # not retried: the same server would keep the user waiting again
    waits = [e for e in events if isinstance(e, Waiting)]
    assert waits and all(w.where == url and w.limit_s == 0.6 for w in waits)
    assert waits[0].waited_s >= 0.3  # the first after half the wait (or 10 s), not at once
    assert "waiting for" in waits[0].words and url in waits[0].words


async def test_a_stream_that_stalls_midway_fails_without_a_fallback_request(
    anthropic_provider: Callable[..., Any],
) -> None:
    server = FakeAnthropicServer([[{"type": "text", "text": "Hello there, this is long"}]])
    hold = server.hold(0, after_events=4)
    with server:
        events, error = await run(anthropic_provider(server, options=WAITS))
        assert hold.reached.is_set()
        hold.release()
        requests, url = len(server.requests), server.base_url
    assert error is not None
    assert f"{url} stopped sending in the middle of the answer" in str(error)
    assert "nothing for 0.4 s" in str(error) and "CLAUDE_STREAM_IDLE_TIMEOUT_MS" in str(error)
    # The partial answer was streamed; no non-streamed fallback asked the stalled server again.
    assert any(isinstance(e, TextDelta) for e in events)
    assert not any(isinstance(e, StreamReset | Completed) for e in events)
    assert requests == 1


async def test_a_slow_but_live_stream_is_not_a_stall(
    anthropic_provider: Callable[..., Any],
) -> None:
    """Gaps shorter than the idle wait, a whole answer longer than it: the answer arrives."""
    script = [{"blocks": [{"type": "text", "text": "one two three"}], "chunk_delay_ms": 150}]
    with FakeAnthropicServer(script) as server:
        events, error = await run(anthropic_provider(server, options=WAITS))
    assert error is None
    assert isinstance(events[-1], Completed)
    assert not any(isinstance(e, Waiting) for e in events)


def test_waits_come_from_the_environment_with_the_settings_over_it() -> None:
    assert Patience.read({}).first_answer == DEFAULT_FIRST_ANSWER_S == 300.0
    assert Patience.read({}).idle == DEFAULT_IDLE_S == 90.0
    env = Patience.read({"API_TIMEOUT_MS": "900000", "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "5000"})
    assert (env.first_answer, env.idle) == (900.0, 5.0)
    settings = Patience.read({"API_TIMEOUT_MS": "1200000"})
    both = settings.over(env)
    assert (both.first_answer, both.idle) == (1200.0, 5.0)
    # The HTTP client's own timeout never cuts a wait short.
    assert both.http >= both.first_answer and both.request >= both.first_answer


@pytest.mark.parametrize("value", ["ten minutes", "-5", "0", "inf", "nan"])
def test_a_wait_that_is_not_milliseconds_says_so(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Patience.read({"API_TIMEOUT_MS": value})
    assert f"API_TIMEOUT_MS={value!r} is not a number of milliseconds" in str(caught.value)
    assert "API_TIMEOUT_MS=600000" in str(caught.value)


def test_the_settings_env_reaches_the_provider_over_the_callers() -> None:
    from tether.providers.anthropic import AnthropicProvider
    from tether.settings.model import Settings
    from tether.workspace.from_settings import model_options

    options = model_options(Settings(env={"API_TIMEOUT_MS": "1000"}))
    caller = {"API_TIMEOUT_MS": "5000", "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "2000"}
    provider = AnthropicProvider("claude-sonnet-4-6", options=options, caller_env=caller)
    patience = provider._conn.patience  # pyright: ignore[reportPrivateUsage]
    assert (patience.first_answer, patience.idle) == (1.0, 2.0)
