"""A turn stops on "prompt is too long" only when compaction cannot help, and then says so
with the numbers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from tether.core.messages import Message, TextBlock, user_text
from tether.errors import EmptyAnswerError, PromptTooLongError
from tether.providers.base import Completed, ModelRequest, StreamEvent, TokenUsage
from tether.providers.models import ModelLimits

from .support import make_engine


class Refusing:
    """Refuses every request with tools as ``tokens`` > ``window`` (and takes the window the
    way the real providers do); answers summary requests (no tools)."""

    name = "refusing"
    model = "refusing"

    def __init__(self, tokens: int, window: int) -> None:
        self.tokens = tokens
        self.window = window
        self.context_window = 1_000_000
        self.summaries = 0
        self.refused = 0

    @property
    def limits(self) -> ModelLimits:
        return ModelLimits(self.context_window, 4_000, 4_000, "none")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.tools:
            self.refused += 1
            self.context_window = self.window
            message = f"prompt is too long: {self.tokens} tokens > {self.window} maximum"
            raise PromptTooLongError(message, status=400, tokens=self.tokens, limit=self.window)
        self.summaries += 1
        reply = Message(role="assistant", content=[TextBlock(text="<summary>S</summary>")])
        yield Completed(reply, "end_turn", TokenUsage(input_tokens=100, output_tokens=5))

    async def discover_window(self, *, again: bool = False) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def test_a_retry_refused_at_the_same_size_stops_with_both_sizes(tmp_path: Path) -> None:
    provider = Refusing(tokens=90_000, window=80_000)
    engine = make_engine(tmp_path, [], [], provider=provider)
    answer = Message(role="assistant", content=[TextBlock(text="an earlier answer")])
    engine.history.replace([user_text("an earlier question"), answer])
    result = await engine.run("go")
    assert result.terminal.reason == "prompt_too_long"
    assert "Compaction did not make the request smaller (90000 tokens" in result.terminal.message
    assert provider.refused == 2 and provider.summaries == 1
    assert engine.meter.context_window == 80_000


async def test_a_window_smaller_than_the_prompt_and_tools_stops_with_the_numbers(
    tmp_path: Path,
) -> None:
    provider = Refusing(tokens=3_000, window=100)
    engine = make_engine(tmp_path, [], [], provider=provider)
    result = await engine.run("go")
    assert result.terminal.reason == "prompt_too_long"
    message = result.terminal.message
    assert "The context cannot be made to fit" in message
    assert (
        "for a window of 100 tokens" in message and "system prompt and tools take about" in message
    )
    assert provider.refused == 1  # not retried: it could not fit


class Emptying(Refusing):
    """Answers the first request with text, then every request with an empty message."""

    def __init__(self) -> None:
        super().__init__(tokens=0, window=1_000_000)
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        if self.calls > 1:
            raise EmptyAnswerError("the model server answered with no content at all")
        reply = Message(role="assistant", content=[TextBlock(text="hello")])
        yield Completed(reply, "end_turn", TokenUsage(output_tokens=5))  # no count: no anchor


async def test_an_empty_answer_to_a_request_no_larger_than_one_answered_is_an_error(
    tmp_path: Path,
) -> None:
    """Not a full window (a larger request was answered): the turn ends as a model error
    the user sees, not as "completed" and not with a compaction."""
    provider = Emptying()
    engine = make_engine(tmp_path, [], [], provider=provider)
    first = await engine.run("a first question, longer than the second one will be")
    assert first.terminal.reason == "completed"
    engine.history.replace([])
    result = await engine.run("go")
    assert result.terminal.reason == "model_error", result.terminal
    assert "no content at all" in result.terminal.message
    assert "no larger than others it answered" in result.terminal.message
    assert provider.calls == 2 and provider.summaries == 0
