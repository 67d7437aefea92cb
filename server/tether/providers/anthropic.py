"""The Anthropic provider: Claude through the official SDK's ``AsyncAnthropic``.

We stream with ``messages.create(..., stream=True)`` (raw SSE events) rather than the
``messages.stream()`` helper. The helper re-parses the partial tool input into a snapshot on
every ``input_json_delta`` and hides where a tool's JSON stopped; we need the raw fragments
anyway to tell a complete tool input from one cut off by ``max_tokens``, and the raw events
map one-to-one onto ours.

Bodies are built by ``anthropic_body.BodyEncoder`` from cached per-message encodings and
sent as raw content through the client's ``post`` (the SDK's way to make requests it has no
method for, with the client's headers, auth and timeouts): ``messages.create`` would copy
and re-encode the whole history on every request.

Recovery is ``retry.stream_with_recovery``: failures before the first event are retried with
backoff; a stream that breaks after it becomes ``StreamReset`` plus one non-streaming request
under the same retry policy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Unpack, cast

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
from tether.providers.anthropic_body import BodyEncoder
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
from tether.providers.connection import ClientCache, Connection, ConnectionArgs
from tether.providers.convert_anthropic import (
    completed_from_response,
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
    SdkFaults,
    connection_lost,
    first_event,
    status_failure,
    stream_with_recovery,
    timed_out,
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
        auth_token: str | None = None,
        base_url: str | None = None,
        options: ModelOptions | None = None,
        **connection: Unpack[ConnectionArgs],
    ):
        self.name = "anthropic"
        self.model = model
        self._auth_token = auth_token
        """``ANTHROPIC_AUTH_TOKEN`` of the caller (bearer auth), used when there is no key."""
        self._conn = Connection.of(base_url, options, **connection)
        self._options = self._conn.options
        self._limits = effective_limits(anthropic_limits(model), self._options)
        self._key_helper = (
            ApiKeyHelper(self._options.api_key_helper, env=self._conn.caller_env)
            if self._options.api_key_helper
            else None
        )
        self._clients: ClientCache[AsyncAnthropic] = ClientCache(self._make_client)
        self._encoder = BodyEncoder()

    @property
    def context_window(self) -> int:
        return self._limits.window

    @property
    def limits(self) -> ModelLimits:
        return self._limits

    async def aclose(self) -> None:
        await self._clients.aclose()

    async def _get_client(self) -> AsyncAnthropic:
        if self._key_helper is None:
            return await self._clients.get(self._conn.api_key)
        # apiKeyHelper: its key (fetched again once stale) picks the client.
        return await self._clients.get(await self._key_helper.key())

    def _make_client(self, api_key: str | None) -> AsyncAnthropic:
        import anthropic

        # A helper's key goes in both headers: proxies read either.
        headers = {"X-Api-Key": api_key} if self._key_helper is not None and api_key else None
        # api_key/base_url None: the SDK reads ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN /
        # ANTHROPIC_BASE_URL (and its profiles) itself. Its own retries are off: see retry.py.
        network = self._conn.network
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            auth_token=None if self._key_helper is not None else self._auth_token,
            base_url=self._conn.base_url,
            default_headers=headers,
            max_retries=0,
            timeout=self._conn.timeout_s,
            # A caller's proxies and CA certificates, not this process's (None: the SDK's own).
            http_client=network.client(anthropic.DefaultAsyncHttpxClient) if network else None,
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
        # aclosing: a consumer that stops early (a cancelled turn) closes the HTTP stream now,
        # not whenever the garbage collector finalizes the inner generator.
        try:
            async with aclosing(await self._events(request)) as events:
                async for event in events:
                    yield event
        except ModelError as e:
            if e.status != 401 or self._key_helper is None:
                raise
            # The helper's key was refused: fetch a fresh one and try once more.
            self._key_helper.invalidate()
            async with aclosing(await self._events(request)) as events:
                async for event in events:
                    yield event

    async def _events(self, request: ModelRequest) -> AsyncGenerator[StreamEvent]:
        client = await self._get_client()
        request = request if request.model else replace(request, model=self.model)
        max_tokens = min(request.max_tokens, self._limits.max_output)
        thinking = self._thinking(request, max_tokens)
        betas = self._betas(thinking)
        headers = {"anthropic-beta": ",".join(betas)} if betas else {}
        body = self._encoder.body(request, max_tokens=max_tokens, thinking=thinking, stream=True)

        async def fallback() -> Completed:
            whole = self._encoder.body(
                request, max_tokens=max_tokens, thinking=thinking, stream=False
            )
            return completed_from_response(
                await _create(client, whole, headers, self._conn.timeout_s)
            )

        return stream_with_recovery(
            self._conn.policy,
            _faults(),
            open_stream=lambda: _open(client, body, headers),
            state=_StreamState(),
            fallback=fallback,
        )


MESSAGES_PATH = "/v1/messages"


async def _open(client: AsyncAnthropic, body: bytes, headers: dict[str, str]) -> OpenStream:
    """Start a stream and read its first event: until then, failures are retried."""
    from anthropic import AsyncStream
    from anthropic.types import Message as WireMessage
    from anthropic.types import RawMessageStreamEvent

    stream = await client.post(
        MESSAGES_PATH,
        cast_to=WireMessage,
        content=body,
        options={"headers": headers},
        stream=True,
        stream_cls=AsyncStream[RawMessageStreamEvent],
    )
    return stream, await first_event(stream, "event")


async def _create(
    client: AsyncAnthropic, body: bytes, headers: dict[str, str], timeout_s: float
) -> WireMessage:
    from anthropic.types import Message as WireMessage

    # An explicit timeout: a large max_tokens without streaming takes long.
    return await client.post(
        MESSAGES_PATH,
        cast_to=WireMessage,
        content=body,
        options={"headers": headers, "timeout": timeout_s},
    )


def _faults() -> SdkFaults:
    import anthropic
    import httpx2

    mid_stream = (httpx2.TransportError, anthropic.APIError)
    return SdkFaults(_classify, mid_stream, _describe_fault)


def _classify(exc: Exception) -> Failure | None:
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        return _status_failure(exc)
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return timed_out("Anthropic API")
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError | EmptyStreamError):
        return connection_lost(exc, "Anthropic API")
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
    return status_failure(
        status,
        message,
        headers,
        api_error="Anthropic API error",
        retry_statuses=(408, 429, 529),
        reasons=_STATUS_REASONS,
    )


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
