"""The Anthropic provider: Claude through the official SDK's ``AsyncAnthropic``.

We stream with ``messages.create(..., stream=True)`` (raw SSE events) rather than the
``messages.stream()`` helper. The helper re-parses the partial tool input into a snapshot on
every ``input_json_delta`` and hides where a tool's JSON stopped; we need the raw fragments
anyway to tell a complete tool input from one cut off by ``max_tokens``, and the raw events
map one-to-one onto ours.

Recovery is ``retry.stream_with_recovery``: failures before the first event are retried with
backoff; a stream that breaks after it becomes ``StreamReset`` plus one non-streaming request
under the same retry policy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

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
from tether.errors import ModelError, PromptTooLongError
from tether.providers.auth import ApiKeyHelper
from tether.providers.base import (
    Completed,
    ModelRequest,
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
from tether.providers.convert_anthropic import (
    AnthropicParams,
    completed_from_response,
    request_params,
    stop_reason,
    usage,
    wire_dict,
)
from tether.providers.models import (
    MIN_THINKING_BUDGET,
    ModelLimits,
    ModelOptions,
    anthropic_limits,
    effective_limits,
    thinking_kind,
)
from tether.providers.retry import (
    EmptyStreamError,
    Failure,
    RetryPolicy,
    parse_retry_after,
    should_retry_header,
    stream_with_recovery,
)

if TYPE_CHECKING:
    from anthropic import APIStatusError, AsyncAnthropic, AsyncStream
    from anthropic.types import Message as WireMessage
    from anthropic.types import (
        RawContentBlockDeltaEvent,
        RawContentBlockStartEvent,
        ThinkingConfigParam,
    )
    from anthropic.types import RawMessageStreamEvent as WireEvent

    OpenStream = tuple[AsyncStream[WireEvent], WireEvent]

INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
"""Lets ``type: enabled`` models think between tool calls (adaptive thinking does anyway)."""
CONTEXT_1M_BETA = "context-1m-2025-08-07"
_STATUS_REASONS = {408: "request timeout", 429: "rate limited", 500: "API error", 529: "overloaded"}
# An SSE ``error`` event arrives on a 200 response; its type tells what it would have been.
_ERROR_TYPE_STATUS = {
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider:
    """Claude via the Messages API (or any server that speaks it, e.g. a proxy or the fake)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        base_delay_s: float = 0.5,
        max_delay_s: float = 30.0,
        timeout_s: float = 600.0,
        options: ModelOptions | None = None,
    ):
        self._model = model
        self._api_key = api_key
        self._auth_token = auth_token
        self._base_url = base_url
        self._policy = RetryPolicy(max_retries, base_delay_s, max_delay_s)
        self._timeout_s = timeout_s
        self._options = options or ModelOptions()
        self._limits = effective_limits(anthropic_limits(model), self._options)
        self._key_helper = (
            ApiKeyHelper(self._options.api_key_helper) if self._options.api_key_helper else None
        )
        self._client: AsyncAnthropic | None = None

    @property
    def name(self) -> str:
        return "anthropic"

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self._limits.window

    @property
    def limits(self) -> ModelLimits:
        return self._limits

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def _get_client(self) -> AsyncAnthropic:
        if self._key_helper is not None and self._key_helper.stale():
            # apiKeyHelper: a fresh key means a new client (the SDK fixes its headers).
            key = await self._key_helper.key()
            if self._client is not None:
                await self._client.close()
            self._client = self._make_client(key, {"X-Api-Key": key})
        if self._client is None:
            self._client = self._make_client(self._api_key, None, self._auth_token)
        return self._client

    def _make_client(
        self, api_key: str | None, headers: dict[str, str] | None, auth_token: str | None = None
    ) -> AsyncAnthropic:
        import anthropic

        # api_key/base_url None: the SDK reads ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN /
        # ANTHROPIC_BASE_URL (and its profiles) itself. Its own retries are off: see retry.py.
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            auth_token=auth_token,
            base_url=self._base_url,
            default_headers=headers,
            max_retries=0,
            timeout=self._timeout_s,
        )

    def _thinking(self, request: ModelRequest, max_tokens: int) -> ThinkingConfigParam | None:
        kind = thinking_kind(self._limits, self._options.thinking) if request.thinking else "none"
        if kind == "adaptive":
            return {"type": "adaptive"}
        if kind == "enabled":
            budget = min(self._options.thinking_budget, max_tokens - 1)
            if budget >= MIN_THINKING_BUDGET:
                return {"type": "enabled", "budget_tokens": budget}
        return None

    def _betas(self, thinking: ThinkingConfigParam | None) -> tuple[str, ...]:
        betas: list[str] = []
        if thinking is not None and thinking["type"] == "enabled":
            betas.append(INTERLEAVED_THINKING_BETA)
        if self._options.context_1m and self._limits.window_1m:
            betas.append(CONTEXT_1M_BETA)
        return tuple(betas)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        try:
            async with aclosing(self._stream(request)) as events:
                async for event in events:
                    yield event
        except ModelError as e:
            if e.status != 401 or self._key_helper is None:
                raise
            # The helper's key was refused: fetch a fresh one and try once more.
            self._key_helper.invalidate()
            async with aclosing(self._stream(request)) as events:
                async for event in events:
                    yield event

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent]:
        import anthropic
        import httpx2

        client = await self._get_client()
        request = request if request.model else replace(request, model=self._model)
        max_tokens = min(request.max_tokens, self._limits.max_output)
        thinking = self._thinking(request, max_tokens)
        params = request_params(
            request, max_tokens=max_tokens, thinking=thinking, betas=self._betas(thinking)
        )

        async def fallback() -> Completed:
            return completed_from_response(await _create(client, params, self._timeout_s))

        events = stream_with_recovery(
            self._policy,
            _classify,
            open_stream=lambda: _open(client, params),
            state=_StreamState(),
            mid_stream_faults=(httpx2.TransportError, anthropic.APIError),
            describe_fault=_describe_fault,
            fallback=fallback,
        )
        # aclosing: a consumer that stops early (a cancelled turn) closes the HTTP stream now,
        # not whenever the garbage collector finalizes the inner generator.
        async with aclosing(events):
            async for event in events:
                yield event


async def _open(client: AsyncAnthropic, params: AnthropicParams) -> OpenStream:
    """Start a stream and read its first event: until then, failures are retried."""
    from anthropic import omit

    stream = await client.messages.create(
        model=params.model,
        max_tokens=params.max_tokens,
        system=params.system or omit,
        messages=params.messages,
        tools=params.tools or omit,
        thinking=params.thinking or omit,
        extra_headers=_beta_headers(params),
        stream=True,
    )
    try:
        first = await anext(stream)
    except StopAsyncIteration:
        await stream.close()
        raise EmptyStreamError("the response ended before its first event") from None
    except BaseException:
        await stream.close()
        raise
    return stream, first


async def _create(client: AsyncAnthropic, params: AnthropicParams, timeout_s: float) -> WireMessage:
    from anthropic import omit

    # An explicit timeout also stops the SDK from refusing a large max_tokens without
    # streaming ("Streaming is required for operations that may take longer than 10 minutes").
    return await client.messages.create(
        model=params.model,
        max_tokens=params.max_tokens,
        system=params.system or omit,
        messages=params.messages,
        tools=params.tools or omit,
        thinking=params.thinking or omit,
        extra_headers=_beta_headers(params),
        stream=False,
        timeout=timeout_s,
    )


def _beta_headers(params: AnthropicParams) -> dict[str, str] | None:
    return {"anthropic-beta": ",".join(params.betas)} if params.betas else None


def _classify(exc: Exception) -> Failure | None:
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        return _status_failure(exc)
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return Failure("request timed out", True, ModelError("Anthropic API: request timed out"))
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError | EmptyStreamError):
        detail = exc.__cause__ or exc
        reason = f"connection error ({type(detail).__name__}: {detail})"
        return Failure(reason, True, ModelError(f"Anthropic API: {reason}"))
    if isinstance(exc, TypeError) and "authentication" in str(exc):
        # The SDK found no credentials: a setup problem the user must fix, not a crash.
        message = "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"
        return Failure(message, False, ModelError(message))
    return None


def _status_failure(exc: APIStatusError) -> Failure:
    message = exc.api_message or str(exc)
    status = exc.status_code
    if status == 200:
        status = _ERROR_TYPE_STATUS.get(exc.type or "", 400)
    headers = exc.response.headers
    if status == 400 and "prompt is too long" in message.lower():
        return Failure("prompt too long", False, PromptTooLongError(message, status=400))
    retryable = status in (408, 429, 529) or status >= 500
    verdict = should_retry_header(headers)
    retryable = retryable if verdict is None else verdict
    reason = _STATUS_REASONS.get(status) or ("server error" if status >= 500 else "HTTP error")
    error = ModelError(
        f"Anthropic API error {status}: {message}", status=status, retryable=retryable
    )
    return Failure(f"{reason} ({status})", retryable, error, parse_retry_after(headers))


def _describe_fault(exc: Exception) -> str:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return f"stream error: {exc.type or 'error'}: {exc.api_message or exc}"
    return f"connection lost mid-stream ({type(exc).__name__}: {exc})"


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


class _StreamState:
    """Turns raw stream events into our events and assembles the final message."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Partial] = {}
        self._usage = TokenUsage()
        self._stop_reason: str | None = None
        self._stopped = False

    def feed(self, event: WireEvent) -> list[StreamEvent]:
        if event.type == "message_start":
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
            self._usage = usage(event.usage, self._usage)
            self._stop_reason = event.delta.stop_reason
        else:
            self._stopped = True
        return []

    def incomplete(self) -> str | None:
        return None if self._stopped else "the stream ended before message_stop"

    def _start(self, event: RawContentBlockStartEvent) -> list[StreamEvent]:
        block = event.content_block
        partial = _Partial(block.type)
        self._blocks[event.index] = partial
        if block.type == "tool_use":
            partial.id, partial.name = block.id, block.name
            return [ToolUseStarted(block.id, block.name)]
        if block.type == "server_tool_use":
            # The input streams as JSON fragments, like a tool_use's.
            partial.server = ServerToolUseBlock.model_validate({**wire_dict(block), "input": {}})
            return []
        if block.type == "web_search_tool_result":
            # Arrives whole in its start event; kept verbatim.
            result = WebSearchToolResultBlock.model_validate(wire_dict(block))
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

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[StreamEvent]:
        partial = self._blocks.setdefault(event.index, _Partial("unknown"))
        delta = event.delta
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
        elif delta.type == "citations_delta":
            partial.citations.append(Citation.model_validate(wire_dict(delta.citation)))
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
    raw = "".join(partial.parts)
    parsed = _parse_object(raw) if raw.strip() else {}
    # Input that does not parse was cut off (normally by max_tokens): mark it, never run it.
    partial.tool_use = ToolUseBlock(
        id=partial.id, name=partial.name, input=parsed or {}, truncated=parsed is None
    )
    return partial.tool_use


def _finish_server_use(block: ServerToolUseBlock, parts: list[str]) -> ServerToolUseBlock:
    raw = "".join(parts)
    parsed = _parse_object(raw) if raw.strip() else {}
    return block.model_copy(update={"input": parsed or {}})


def _parse_object(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None
