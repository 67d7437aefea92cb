"""``--fallback-model``: the fallback serves a request the main model could not start; a
request that already streamed, or one that is simply wrong, is not sent elsewhere."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tether.core.messages import Message, TextBlock
from tether.errors import ModelError, PromptTooLongError
from tether.providers.base import Completed, ModelRequest, StreamEvent, TextDelta
from tether.providers.fallback import FallbackProvider


class Stub:
    """A provider whose stream yields ``events`` then raises ``error`` (if any)."""

    def __init__(self, model: str, events: list[StreamEvent], error: Exception | None = None):
        self._model = model
        self.events = events
        self.error = error
        self.requests: list[ModelRequest] = []
        self.closed = False

    @property
    def name(self) -> str:
        return "stub"

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return 100_000 if self._model == "main" else 50_000

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        for event in self.events:
            yield event
        if self.error is not None:
            raise self.error

    async def discover_window(self, *, again: bool = False) -> None:
        return None

    async def aclose(self) -> None:
        self.closed = True


def done(text: str) -> list[StreamEvent]:
    message = Message(role="assistant", content=[TextBlock(text=text)])
    return [TextDelta(text), Completed(message, "end_turn")]


REQUEST = ModelRequest(model="main", system=[], messages=[], tools=[])


async def collect(provider: FallbackProvider) -> list[StreamEvent]:
    return [event async for event in provider.stream(REQUEST)]


async def test_an_overloaded_model_hands_the_request_over() -> None:
    heard: list[str] = []
    main = Stub("main", [], ModelError("overloaded", status=529))
    spare = Stub("spare", done("from the spare"))
    provider = FallbackProvider(main, spare, on_fallback=heard.append)
    events = await collect(provider)
    assert isinstance(events[0], TextDelta) and events[0].text == "from the spare"
    assert spare.requests[0].model == "spare"
    assert heard == ["main failed (overloaded); using spare"]
    assert provider.model == "main" and provider.context_window == 50_000
    await provider.aclose()
    assert main.closed and spare.closed


async def test_a_started_stream_is_not_repeated_elsewhere() -> None:
    main = Stub("main", [TextDelta("half")], ModelError("overloaded", status=529))
    spare = Stub("spare", done("never"))
    with pytest.raises(ModelError):
        await collect(FallbackProvider(main, spare))
    assert spare.requests == []


@pytest.mark.parametrize(
    "error",
    [ModelError("bad request", status=400), PromptTooLongError("too long", status=400)],
)
async def test_errors_another_model_would_repeat_are_not_handed_over(error: Exception) -> None:
    spare = Stub("spare", done("never"))
    with pytest.raises(type(error)):
        await collect(FallbackProvider(Stub("main", [], error), spare))
    assert spare.requests == []
