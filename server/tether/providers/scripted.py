"""A deterministic provider that plays a script (see ``providers/script.py``).

It streams each scripted turn as real events (text in small chunks, tool uses one by one),
so the engine's streaming paths run exactly as with a live model. It fails loudly: a call
after the last turn raises ``ScriptError``, and ``assert_complete`` raises if turns remain.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from tether.context.tokens import TokenCounter
from tether.core.messages import (
    Block,
    Citation,
    Message,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebSearchError,
    WebSearchResult,
    WebSearchToolResultBlock,
)
from tether.errors import ScriptError
from tether.providers.base import (
    Completed,
    ModelRequest,
    ModelStopReason,
    ServerToolFinished,
    ServerToolStarted,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.script import (
    Script,
    ScriptText,
    ScriptThinking,
    ScriptTurn,
    ScriptWebSearch,
    load_script,
    server_tool_use_id,
    tool_use_id,
)

CHUNK_CHARS = 24


class ScriptedProvider:
    def __init__(
        self, script: Script, *, model: str = "scripted", context_window: int | None = None
    ):
        self._script = script
        self._model = model
        self._context_window = context_window or script.context_window
        self._next = 0
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProvider:
        return cls(load_script(path), model=f"scripted:{path.name}")

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self._context_window

    @property
    def remaining(self) -> int:
        return len(self._script.turns) - self._next

    def assert_complete(self) -> None:
        if self.remaining:
            raise ScriptError(f"the script has {self.remaining} unconsumed turn(s)")

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        index = self._next
        if index >= len(self._script.turns):
            raise ScriptError(
                f"unexpected model call #{index + 1}: the script has only "
                f"{len(self._script.turns)} turn(s)"
            )
        turn = self._script.turns[index]
        self._next += 1
        self.requests.append(request)
        if turn.fault is not None:
            raise ScriptError(f"turn {index + 1}: faults need a fake API server, not 'scripted'")
        _check_expectation(index, turn, request)
        async for event in _play(index, turn, request):
            yield event


async def _play(index: int, turn: ScriptTurn, request: ModelRequest) -> AsyncIterator[StreamEvent]:
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
            use, result = _search(index, b_index, block)
            yield ServerToolStarted(use)
            yield ServerToolFinished(result)
            blocks += [use, result]
        elif isinstance(block, ScriptThinking):
            yield ThinkingDelta(block.thinking)
            blocks.append(ThinkingBlock(thinking=block.thinking, signature="scripted"))
        else:
            use = ToolUseBlock(
                id=block.id or tool_use_id(index, b_index), name=block.name, input=block.input
            )
            yield ToolUseStarted(use.id, use.name)
            if delay:
                await asyncio.sleep(delay)
            yield ToolUseReady(use)
            blocks.append(use)
    stop: ModelStopReason = turn.effective_stop_reason  # type: ignore[assignment]
    message = Message(role="assistant", content=blocks)
    if "usage" in turn.model_fields_set:
        usage = TokenUsage(
            input_tokens=turn.usage.input_tokens,
            output_tokens=turn.usage.output_tokens,
            cache_read_tokens=turn.usage.cache_read_input_tokens,
            cache_creation_tokens=turn.usage.cache_creation_input_tokens,
        )
    else:  # plausible numbers, so context accounting behaves as with a real model
        counter = TokenCounter()
        usage = TokenUsage(
            input_tokens=counter.prefix(request.system, request.tools)
            + counter.messages(request.messages),
            output_tokens=counter.message(message),
        )
    yield Completed(message, stop, usage)


def _search(
    index: int, b_index: int, block: ScriptWebSearch
) -> tuple[ServerToolUseBlock, WebSearchToolResultBlock]:
    use_id = block.id or server_tool_use_id(index, b_index)
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
