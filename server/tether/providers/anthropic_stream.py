"""Reading a Messages API stream: its events into ours, and the final message assembled.

Tool input streams as JSON fragments; they are kept raw so that a complete input can be told
from one cut off by ``max_tokens`` (which never runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.core.json_input import parse_model_input
from tether.core.messages import (
    Block,
    Citation,
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
)
from tether.providers.anthropic_events import WireEvent
from tether.providers.base import (
    Completed,
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
from tether.providers.convert_anthropic import stop_reason, usage


@dataclass
class _Partial:
    """A content block while it streams."""

    type: str
    parts: list[str] = field(default_factory=list[str])
    signature: str = ""
    id: str = ""
    name: str = ""
    tool_use: ToolUseBlock | None = None
    """Set once a tool_use block is complete."""
    citations: list[Citation] = field(default_factory=list[Citation])
    server: ServerToolUseBlock | WebSearchToolResultBlock | None = None
    """A provider-side tool's block (its input filled in once complete)."""


class StreamState:
    """Turns raw stream events into our events and assembles the final message."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Partial] = {}
        self._usage = TokenUsage()
        self._stop_reason: str | None = None
        self._stopped = False

    def feed(self, event: WireEvent) -> list[StreamEvent]:
        if event.type == "message_start":
            if event.message is not None:
                self._usage = usage(event.message.usage)
        elif event.type == "content_block_start":
            return self._start(event)
        elif event.type == "content_block_delta":
            return self._delta(event)
        elif event.type == "content_block_stop":
            partial = self._blocks.get(event.index)
            if partial is not None and partial.type == "tool_use":
                return [ToolUseReady(_finish_tool_use(partial))]
            if partial is not None and partial.type in ("thinking", "redacted_thinking"):
                return [ThinkingReady(_thinking_block(partial))]
            if partial is not None and isinstance(partial.server, ServerToolUseBlock):
                partial.server = _finish_server_use(partial.server, partial.parts)
                return [ServerToolStarted(partial.server)]
        elif event.type == "message_delta":
            if event.usage is not None:
                self._usage = usage(event.usage, self._usage)
            if event.delta is not None:
                self._stop_reason = event.delta.stop_reason
        elif event.type == "message_stop":
            self._stopped = True
        return []

    def incomplete(self) -> str | None:
        return None if self._stopped else "the stream ended before message_stop"

    def _start(self, event: WireEvent) -> list[StreamEvent]:
        block = event.content_block
        if block is None:
            return []
        partial = _Partial(block.type)
        self._blocks[event.index] = partial
        if block.type == "tool_use":
            partial.id, partial.name = block.id, block.name
            return [ToolUseStarted(block.id, block.name)]
        if block.type == "server_tool_use":
            # The input streams as JSON fragments, like a tool_use's.
            partial.server = ServerToolUseBlock.model_validate({**block.as_sent(), "input": {}})
            return []
        if block.type == "web_search_tool_result":
            # Arrives whole in its start event; kept verbatim.
            result = WebSearchToolResultBlock.model_validate(block.as_sent())
            partial.server = result
            return [ServerToolFinished(result)]
        if block.type == "text" and block.text:
            partial.parts.append(block.text)
            return [TextDelta(block.text)]
        if block.type == "thinking":
            partial.signature = block.signature
            if block.thinking:
                partial.parts.append(block.thinking)
                return [ThinkingDelta(block.thinking)]
        if block.type == "redacted_thinking":
            partial.parts.append(block.data)
        return []

    def _delta(self, event: WireEvent) -> list[StreamEvent]:
        partial = self._blocks.setdefault(event.index, _Partial("unknown"))
        delta = event.delta
        if delta is None:
            return []
        if delta.type == "text_delta":
            partial.parts.append(delta.text)
            return [TextDelta(delta.text)]
        if delta.type == "thinking_delta":
            partial.parts.append(delta.thinking)
            return [ThinkingDelta(delta.thinking)]
        if delta.type == "signature_delta":
            partial.signature = delta.signature
        elif delta.type == "input_json_delta":
            partial.parts.append(delta.partial_json)
        elif delta.type == "citations_delta" and delta.citation is not None:
            partial.citations.append(Citation.model_validate(delta.citation))
        return []

    def finish(self) -> list[StreamEvent]:
        blocks: list[Block] = []
        for index in sorted(self._blocks):
            partial = self._blocks[index]
            text = "".join(partial.parts)
            if partial.server is not None:
                server = partial.server
                if isinstance(server, ServerToolUseBlock) and server.input == {} and text:
                    server = _finish_server_use(server, partial.parts)
                blocks.append(server)
            elif partial.type == "text":
                blocks.append(TextBlock(text=text, citations=tuple(partial.citations) or None))
            elif partial.type in ("thinking", "redacted_thinking"):
                blocks.append(_thinking_block(partial))
            elif partial.type == "tool_use":
                blocks.append(partial.tool_use or _finish_tool_use(partial))
        message = Message(role="assistant", content=blocks)
        return [Completed(message, stop_reason(self._stop_reason), self._usage)]


def _thinking_block(partial: _Partial) -> ThinkingBlock | RedactedThinkingBlock:
    text = "".join(partial.parts)
    if partial.type == "redacted_thinking":
        return RedactedThinkingBlock(data=text)
    return ThinkingBlock(thinking=text, signature=partial.signature)


def _finish_tool_use(partial: _Partial) -> ToolUseBlock:
    parsed, refused = parse_model_input("".join(partial.parts))
    # Input that does not parse was cut off (normally by max_tokens): mark it, never run it.
    partial.tool_use = ToolUseBlock(
        id=partial.id,
        name=partial.name,
        input=parsed or {},
        truncated=parsed is None,
        refused=refused,
    )
    return partial.tool_use


def _finish_server_use(block: ServerToolUseBlock, parts: list[str]) -> ServerToolUseBlock:
    raw = "".join(parts)
    parsed = _parse_object(raw) if raw.strip() else {}
    return block.model_copy(update={"input": parsed or {}})


def _parse_object(raw: str) -> dict[str, Any] | None:
    parsed, refused = parse_model_input(raw)
    return None if refused is not None else parsed
