"""Conversions between Tether's messages and the Anthropic Messages API.

Request side: ``Message``/``SystemBlock``/``ToolSpec`` -> the SDK's param TypedDicts, with the
prompt-caching breakpoints placed. Response side: a full SDK ``Message`` -> our ``Message``,
stop reason and ``TokenUsage`` (the non-streaming fallback's result), from our own wire models
(``anthropic_events``).

Only type names come from the SDK (``TYPE_CHECKING``): importing ``anthropic`` costs about a
second and stays off every path that has a key or a token (``anthropic_transport``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

from tether.core.json_input import model_input_problem
from tether.core.messages import (
    Block,
    Citation,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
)
from tether.providers.base import (
    Completed,
    ModelRequest,
    ModelStopReason,
    TokenUsage,
    ToolSpec,
    WebSearchOptions,
)

if TYPE_CHECKING:
    from anthropic.types import (
        CacheControlEphemeralParam,
        ContentBlockParam,
        DocumentBlockParam,
        ImageBlockParam,
        MessageParam,
        TextBlockParam,
        TextCitationParam,
        ThinkingConfigParam,
        ToolParam,
        ToolResultBlockParam,
        ToolUnionParam,
        WebSearchTool20250305Param,
    )

    from tether.providers.anthropic_events import WireMessage, WireUsage

MAX_CACHE_BREAKPOINTS = 4
"""The API rejects requests with more ``cache_control`` markers than this."""

ImageMediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


def _ephemeral() -> CacheControlEphemeralParam:
    return {"type": "ephemeral"}


@dataclass(frozen=True)
class AnthropicParams:
    """The parts of a ``messages.create`` call that come from a ``ModelRequest``."""

    model: str
    max_tokens: int
    system: list[TextBlockParam]
    messages: list[MessageParam]
    tools: list[ToolUnionParam]
    thinking: ThinkingConfigParam | None = None
    betas: tuple[str, ...] = ()
    """``anthropic-beta`` header values."""


def request_params(
    request: ModelRequest,
    *,
    max_tokens: int,
    thinking: ThinkingConfigParam | None = None,
    betas: tuple[str, ...] = (),
) -> AnthropicParams:
    """Convert a request and place its caching breakpoints (at most four, asserted).

    Breakpoints go on the last tool (tools render first, so this caches all of them), on each
    system block marked ``cache``, and with ``cache_history`` on the newest message so the next
    request reads the whole conversation from the cache.
    """
    tools = [tool_param(t) for t in request.tools]
    if tools:
        tools[-1]["cache_control"] = _ephemeral()
    system: list[TextBlockParam] = []
    for block in request.system:
        param: TextBlockParam = {"type": "text", "text": block.text}
        if block.cache:
            param["cache_control"] = _ephemeral()
        system.append(param)
    messages = [p for p in (message_param(m) for m in request.messages) if p is not None]
    if request.cache_history and messages:
        _mark_last_block(messages[-1])
    used = sum(1 for _ in _breakpoints(system, messages, tools))
    assert used <= MAX_CACHE_BREAKPOINTS, f"{used} cache breakpoints; the API allows 4"
    return AnthropicParams(request.model, max_tokens, system, messages, tools, thinking, betas)


WEB_SEARCH_TOOL = "web_search_20250305"


def tool_param(spec: ToolSpec) -> ToolUnionParam:
    if spec.server is not None:
        return _web_search_param(spec.server)
    param: ToolParam = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema,
    }
    return param


def _web_search_param(options: WebSearchOptions) -> WebSearchTool20250305Param:
    param: WebSearchTool20250305Param = {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": options.max_uses,
    }
    # The API refuses both lists at once; an allow list is the stricter of the two.
    if options.allowed_domains:
        param["allowed_domains"] = list(options.allowed_domains)
    elif options.blocked_domains:
        param["blocked_domains"] = list(options.blocked_domains)
    return param


def message_param(message: Message) -> MessageParam | None:
    """One message in wire form; ``None`` when nothing sendable is left in it."""
    content: list[ContentBlockParam] = []
    for block in message.content:
        param = block_param(block)
        if param is not None:
            content.append(param)
    if not content:
        return None
    if message.role == "user":
        return {"role": "user", "content": content}
    return {"role": "assistant", "content": content}


def block_param(block: Block) -> ContentBlockParam | None:
    if isinstance(block, TextBlock):
        # The API refuses empty and whitespace-only text blocks (e.g. a reply cut off
        # before its first word); they carry nothing, so they are left out.
        return _text_param(block) if block.text.strip() else None
    if isinstance(block, ImageBlock):
        return _image_param(block)
    if isinstance(block, DocumentBlock):
        return _document_param(block)
    if isinstance(block, ServerToolUseBlock | WebSearchToolResultBlock):
        # Back exactly as the API sent them (the encrypted parts are checked).
        return cast("ContentBlockParam", block.model_dump(mode="json"))
    if isinstance(block, ThinkingBlock):
        # The API verifies signatures on thinking blocks it gets back; one without a
        # signature (e.g. from another provider) would be rejected, so it is dropped.
        if not block.signature:
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return _tool_result_param(block)


def _text_param(block: TextBlock) -> TextBlockParam:
    param: TextBlockParam = {"type": "text", "text": block.text}
    if block.citations:
        param["citations"] = cast(
            "list[TextCitationParam]", [c.model_dump(mode="json") for c in block.citations]
        )
    return param


def _document_param(block: DocumentBlock) -> DocumentBlockParam:
    param: DocumentBlockParam = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": block.data},
    }
    if block.title:
        param["title"] = block.title
    return param


def _image_param(block: ImageBlock) -> ImageBlockParam:
    media_type = cast("ImageMediaType", block.media_type)
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": block.data},
    }


def _tool_result_param(block: ToolResultBlock) -> ToolResultBlockParam:
    param: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    parts = [p for p in block.content if not isinstance(p, TextBlock) or p.text.strip()]
    if parts:
        param["content"] = [
            _text_param(part)
            if isinstance(part, TextBlock)
            else _image_param(part)
            if isinstance(part, ImageBlock)
            else _document_param(part)
            for part in parts
        ]
    if block.is_error:
        param["is_error"] = True
    return param


def _mark_last_block(message: MessageParam) -> None:
    content = cast("list[dict[str, object]]", message["content"])
    # Thinking blocks cannot carry cache_control; the breakpoint goes on the block before.
    for block in reversed(content):
        if block.get("type") not in ("thinking", "redacted_thinking"):
            block["cache_control"] = _ephemeral()
            return


def _breakpoints(
    system: list[TextBlockParam], messages: list[MessageParam], tools: list[ToolUnionParam]
) -> Iterator[object]:
    yield from (t for t in tools if t.get("cache_control"))
    yield from (s for s in system if s.get("cache_control"))
    for message in messages:
        blocks = cast("list[dict[str, object]]", message["content"])
        yield from (b for b in blocks if b.get("cache_control"))


def stop_reason(wire: str | None) -> ModelStopReason:
    if wire in ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"):
        return wire
    if wire == "model_context_window_exceeded":
        # Output was cut off by the context window rather than max_tokens: same recovery.
        return "max_tokens"
    return "end_turn"


def usage(wire: WireUsage, base: TokenUsage | None = None) -> TokenUsage:
    """Merge wire usage into ``base``: fields the wire leaves out (None) keep their value."""
    base = base or TokenUsage()
    return TokenUsage(
        input_tokens=_pick(wire.input_tokens, base.input_tokens),
        output_tokens=_pick(wire.output_tokens, base.output_tokens),
        cache_read_tokens=_pick(wire.cache_read_input_tokens, base.cache_read_tokens),
        cache_creation_tokens=_pick(wire.cache_creation_input_tokens, base.cache_creation_tokens),
    )


def _pick(value: int | None, default: int) -> int:
    return default if value is None else value


def completed_from_response(response: WireMessage) -> Completed:
    """The ``Completed`` event for a full (non-streaming) response."""
    reason = stop_reason(response.stop_reason)
    blocks: list[Block] = []
    for block in response.content:
        if block.type == "text":
            citations = (
                tuple(Citation.model_validate(c) for c in block.citations)
                if block.citations
                else None
            )
            blocks.append(TextBlock(text=block.text, citations=citations))
        elif block.type == "thinking":
            blocks.append(ThinkingBlock(thinking=block.thinking, signature=block.signature))
        elif block.type == "redacted_thinking":
            blocks.append(RedactedThinkingBlock(data=block.data))
        elif block.type == "tool_use":
            given = dict(block.input or {})
            refused = model_input_problem(given)
            blocks.append(
                ToolUseBlock(
                    id=block.id, name=block.name, input={} if refused else given, refused=refused
                )
            )
        elif block.type == "server_tool_use":
            blocks.append(ServerToolUseBlock.model_validate(block.as_sent()))
        elif block.type == "web_search_tool_result":
            blocks.append(WebSearchToolResultBlock.model_validate(block.as_sent()))
    if reason == "max_tokens" and blocks and isinstance(blocks[-1], ToolUseBlock):
        # A tool_use that ends a max_tokens response may hold cut-off input; never run it.
        blocks[-1] = blocks[-1].model_copy(update={"input": {}, "truncated": True})
    message = Message(role="assistant", content=blocks)
    return Completed(message, reason, usage(response.usage))
