"""A deterministic provider that plays a script (see ``providers/script.py``).

It streams each scripted turn as real events (text in small chunks, tool uses one by one),
so the engine's streaming paths run exactly as with a live model. It fails loudly: a call
after the last turn raises ``ScriptError``, and ``assert_complete`` raises if turns remain.

It is as strict as the fake Messages API: each request is converted to the Messages wire
form and checked by ``tether.testing.anthropic_rules`` (a refusal raises ``ModelError``,
an over-long prompt ``PromptTooLongError``, and consumes no turn); thinking blocks carry
signatures the rules verify; usage counts input tokens by the same documented rule.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tether.context.tokens import TokenCounter
from tether.core.messages import (
    Block,
    Citation,
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebSearchError,
    WebSearchResult,
    WebSearchToolResultBlock,
)
from tether.errors import ModelError, PromptTooLongError, ScriptError
from tether.providers.base import (
    Completed,
    ModelRequest,
    ModelStopReason,
    ServerToolFinished,
    ServerToolStarted,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.convert_anthropic import request_params
from tether.providers.models import ModelLimits
from tether.providers.overflow import read_overflow
from tether.providers.script import (
    Script,
    ScriptRedactedThinking,
    ScriptText,
    ScriptThinking,
    ScriptTurn,
    ScriptWebSearch,
    load_script,
    server_tool_use_id,
    tool_use_id,
)
from tether.testing.anthropic_checker import RequestChecker
from tether.testing.anthropic_rules import RequestContext, redacted_data, sign

CHUNK_CHARS = 24
DEFAULT_WINDOW = 200_000
WIRE_MODEL = "claude-scripted"
"""The model name the rules see (a scripted model thinks adaptively, like current ones)."""


class ScriptedProvider:
    def __init__(
        self, script: Script, *, model: str = "scripted", context_window: int | None = None
    ):
        self._script = script
        self._model = model
        window = context_window or script.context_window or DEFAULT_WINDOW
        self._limits = ModelLimits(window, 64_000, 32_000, "adaptive")
        self._next = 0
        # Each play of the script has its own tool ids: a session resumed (a new provider
        # over the same script) or a second session must not repeat the ids of the first.
        self._run = f"{secrets.token_hex(4)}_"
        self._thought_before_tools: set[str] = set()
        self._checker = RequestChecker()
        self.requests: list[ModelRequest] = []
        self.refused: list[str] = []
        """Messages of the requests the rules refused."""

    @classmethod
    def from_file(cls, path: Path, *, context_window: int | None = None) -> ScriptedProvider:
        return cls(load_script(path), model=f"scripted:{path.name}", context_window=context_window)

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self._limits.window

    @property
    def limits(self) -> ModelLimits:
        return self._limits

    @property
    def remaining(self) -> int:
        return len(self._script.turns) - self._next

    def assert_complete(self) -> None:
        if self.remaining:
            raise ScriptError(f"the script has {self.remaining} unconsumed turn(s)")

    async def aclose(self) -> None:
        return None

    async def discover_window(self, *, again: bool = False) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        index = self._next
        if index >= len(self._script.turns):
            raise ScriptError(
                f"unexpected model call #{index + 1}: the script has only "
                f"{len(self._script.turns)} turn(s)"
            )
        counted = self._check(request)
        turn = self._script.turns[index]
        self._next += 1
        self.requests.append(request)
        if turn.fault is not None:
            raise ScriptError(f"turn {index + 1}: faults need a fake API server, not 'scripted'")
        _check_expectation(index, turn, request)
        thinks = [b for b in turn.blocks if isinstance(b, ScriptThinking | ScriptRedactedThinking)]
        if thinks and not request.thinking:
            raise ScriptError(f"turn {index + 1} scripts thinking, but the request has it off")
        async for event in _play(index, turn, counted, self._thought_before_tools, self._run):
            yield event

    def _check(self, request: ModelRequest) -> int:
        """Refuse what the Messages API refuses; the request's input tokens otherwise."""
        max_tokens = min(request.max_tokens, self._limits.max_output)
        params = request_params(request, max_tokens=max_tokens)
        body: dict[str, Any] = {
            "model": WIRE_MODEL,
            "max_tokens": max_tokens,
            "messages": params.messages,
            "system": params.system,
            "tools": params.tools,
        }
        if request.thinking:
            body["thinking"] = {"type": "adaptive"}
        ctx = RequestContext(self._limits, self._limits.window, self._thought_before_tools)
        verdict = self._checker.check(body, ctx)
        error = verdict.error
        if error is None:
            return verdict.tokens
        self.refused.append(error.message)
        if error.message.startswith("prompt is too long"):
            found = read_overflow(error.message)
            raise PromptTooLongError(
                error.message,
                status=400,
                tokens=found.tokens,
                limit=found.limit,
                output=found.output,
            )
        raise ModelError(f"the request was refused: {error.message}", status=error.status)


async def _play(
    index: int, turn: ScriptTurn, counted: int, thought: set[str], run: str
) -> AsyncIterator[StreamEvent]:
    delay = turn.chunk_delay_ms / 1000
    blocks: list[Block] = []
    for b_index, block in enumerate(turn.blocks):
        if isinstance(block, ScriptText):
            for start in range(0, max(len(block.text), 1), CHUNK_CHARS):
                if delay:
                    await asyncio.sleep(delay)
                yield TextDelta(block.text[start : start + CHUNK_CHARS])
            citations = tuple(
                Citation(type="web_search_result_location", **c.model_dump())
                for c in block.citations or []
            )
            blocks.append(TextBlock(text=block.text, citations=citations or None))
        elif isinstance(block, ScriptWebSearch):
            use, result = _search(index, b_index, block, run)
            yield ServerToolStarted(use)
            yield ServerToolFinished(result)
            blocks += [use, result]
        elif isinstance(block, ScriptThinking):
            yield ThinkingDelta(block.thinking)
            thinking = ThinkingBlock(thinking=block.thinking, signature=sign(block.thinking))
            yield ThinkingReady(thinking)
            blocks.append(thinking)
        elif isinstance(block, ScriptRedactedThinking):
            redacted = RedactedThinkingBlock(data=redacted_data(f"{index}:{b_index}"))
            yield ThinkingReady(redacted)
            blocks.append(redacted)
        else:
            use = ToolUseBlock(
                id=block.id or tool_use_id(index, b_index, run), name=block.name, input=block.input
            )
            yield ToolUseStarted(use.id, use.name)
            if delay:
                await asyncio.sleep(delay)
            yield ToolUseReady(use)
            blocks.append(use)
    stop: ModelStopReason = turn.effective_stop_reason  # type: ignore[assignment]
    message = Message(role="assistant", content=blocks)
    if blocks and isinstance(blocks[0], ThinkingBlock | RedactedThinkingBlock):
        thought.update(u.id for u in message.tool_uses)
    u = turn.usage
    cached = u.cache_read_input_tokens + u.cache_creation_input_tokens
    output = u.output_tokens if "usage" in turn.model_fields_set else None
    usage = TokenUsage(
        input_tokens=u.input_tokens if u.input_tokens is not None else max(counted - cached, 0),
        output_tokens=output if output is not None else TokenCounter().message(message),
        cache_read_tokens=u.cache_read_input_tokens,
        cache_creation_tokens=u.cache_creation_input_tokens,
    )
    yield Completed(message, stop, usage)


def _search(
    index: int, b_index: int, block: ScriptWebSearch, run: str
) -> tuple[ServerToolUseBlock, WebSearchToolResultBlock]:
    use_id = block.id or server_tool_use_id(index, b_index, run)
    use = ServerToolUseBlock(id=use_id, name="web_search", input={"query": block.query})
    content = (
        WebSearchError(error_code=block.error)
        if block.error is not None
        else [WebSearchResult(url=r.url, title=r.title, page_age=r.page_age) for r in block.results]
    )
    return use, WebSearchToolResultBlock(tool_use_id=use_id, content=content)


def _text_of(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock | ToolResultBlock):
            parts.append(block.text)
    return "\n".join(parts)


def _check_expectation(index: int, turn: ScriptTurn, request: ModelRequest) -> None:
    if turn.expect is None or turn.expect.contains is None:
        return
    users = [m for m in request.messages if m.role == "user"]
    haystack = _text_of(users[-1]) if users else ""
    if turn.expect.contains not in haystack:
        raise ScriptError(
            f"turn {index + 1}: expected the last user message to contain {turn.expect.contains!r}"
        )
