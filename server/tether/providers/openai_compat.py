"""Any OpenAI-compatible chat-completions endpoint (Ollama, vLLM, llama.cpp, LM Studio).

Uses the official SDK's ``AsyncOpenAI`` (imported lazily, its retries off) with the same
recovery as the Anthropic provider (``retry.stream_with_recovery``). Servers differ in small
ways; we tolerate a missing usage chunk, tool calls without ids, and ``finish_reason: "stop"``
on a message that calls tools.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Unpack, cast

from tether.core.messages import Block, Message, TextBlock, ThinkingBlock, ToolUseBlock
from tether.errors import EmptyAnswerError, PromptTooLongError
from tether.providers import retry
from tether.providers.base import (
    Completed,
    ModelRequest,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.connection import ClientCache, Connection, ConnectionArgs
from tether.providers.convert_openai import (
    completed_from_response,
    fallback_call_id,
    reasoning,
    stop_reason,
    tool_use,
    usage,
)
from tether.providers.discovery import ANY_SETTING, discover_window
from tether.providers.models import DEFAULT_OUTPUT_CAP, ModelLimits, ModelOptions
from tether.providers.network import NetworkSettings
from tether.providers.openai_body import ChatBodyEncoder
from tether.providers.overflow import OVERFLOW_STATUSES, is_overflow, read_overflow
from tether.providers.watch import Watch
from tether.providers.windows import LearnedWindow

if TYPE_CHECKING:
    import httpx2
    from openai import APIError, AsyncOpenAI, AsyncStream, RequestOptions
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

    OpenStream = tuple[AsyncStream[ChatCompletionChunk], ChatCompletionChunk]

FALLBACK_WINDOW = 32_768
"""When the server does not say and no setting does: a common local-model length."""


class OpenAICompatProvider:
    """A model behind ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        options: ModelOptions | None = None,
        **connection: Unpack[ConnectionArgs],
    ):
        self.name = "openai"
        self.model = model
        self._base_url = base_url
        # Local servers need no key, but the SDK refuses to start without one.
        key = connection.get("api_key") or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._api_key = key
        self._conn = Connection.of(base_url, options, **{**connection, "api_key": key})
        self._options = self._conn.options
        self._max_output_tokens = self._options.max_output_tokens
        self._discovered: int | None = None
        self._setting = ANY_SETTING
        """The server's own setting for its window, once it said which server it is."""
        self._asked = False
        self._clients: ClientCache[AsyncOpenAI] = ClientCache(self._make_client)
        self._encoder = ChatBodyEncoder()
        credential = None if key == "not-needed" else key
        self._window = LearnedWindow(self._conn.windows, base_url, model, credential)

    @property
    def context_window(self) -> int:
        """The setting, else what the server reported, else ``FALLBACK_WINDOW``; less where
        a refusal named less (an explicit setting: only a refusal in this session)."""
        if self._options.context_window:
            return self._window.cap(self._options.context_window, explicit=True)
        return self._window.cap(self._discovered or FALLBACK_WINDOW)

    @property
    def limits(self) -> ModelLimits:
        window = self.context_window
        # Output shares the window on these servers: at most a quarter of it by default.
        cap = self._max_output_tokens or min(DEFAULT_OUTPUT_CAP, max(window // 4, 256))
        learned = self._window.learned(window)
        return ModelLimits(window, cap, cap, "none", window_setting=self._setting, learned=learned)

    async def discover_window(self, *, again: bool = False) -> None:
        """Ask the server for the model's window once, or ``again`` (no-op when a setting
        fixes it)."""
        if (self._asked and not again) or self._options.context_window:
            return
        self._asked = True
        found = await discover_window(self._base_url, self.model, self._api_key, self._conn.network)
        if found is not None:
            self._window.announced()  # fresher than what an earlier session learned
            self._discovered, self._setting = found.window, found.setting
        elif not again:
            self._discovered = None
        else:  # the server does not say: an earlier session's window may be out of date
            self._window.retry()

    async def aclose(self) -> None:
        await self._clients.aclose()

    def _make_client(self, api_key: str | None) -> AsyncOpenAI:
        import openai

        # A caller's proxies and CA certificates (in-process, this process's), and redirects
        # followed as the SDK's own client does, except those that are not the API's.
        network = self._conn.network or NetworkSettings.of(os.environ)
        http = network.client(openai.DefaultAsyncHttpxClient, event_hooks=retry.MODEL_CLIENT_HOOKS)
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self._conn.base_url,
            max_retries=0,
            timeout=self._conn.timeout_s,
            http_client=http,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        await self.discover_window()
        request = request if request.model else replace(request, model=self.model)
        client = await self._clients.get(self._api_key)
        call = _Call(client, request, self._max_output_tokens, self._encoder)

        async def fallback() -> Completed:
            return completed_from_response(await call.create())

        recovering = retry.stream_with_recovery(
            self._conn.policy,
            _faults(self._base_url),
            open_stream=call.open,
            state=_StreamState(),
            fallback=fallback,
            watch=Watch(self._conn.patience, self._base_url),
        )
        try:
            async with aclosing(recovering) as events:  # closed now if the consumer stops early
                async for event in events:
                    if isinstance(event, Completed):
                        check_not_empty(event, self._base_url)
                        self._window.accepted(request.model, event.usage.context_tokens)
                    yield event
        except PromptTooLongError as e:
            self._window.refused(request.model, e.limit, str(e))
            raise


def check_not_empty(completed: Completed, base_url: str) -> None:
    """A completion that stopped by itself (``finish_reason: "stop"``) promises a message:
    one with nothing in it is the server failing quietly, not the model's answer."""
    if completed.message.content or completed.stop_reason != "end_turn":
        return
    counted = completed.usage.context_tokens
    said = f" (it counted {counted} prompt tokens)" if counted else ""
    raise EmptyAnswerError(
        f"the model server at {base_url} answered with no content at all{said}: no text and "
        "no tool call, with finish_reason stop",
        tokens=counted or None,
    )


CHAT_PATH = "/chat/completions"
_AUTH: RequestOptions = {"security": {"bearer_auth": True}}
"""What ``chat.completions.create`` asks of the client: the key as a bearer token."""


@dataclass(frozen=True)
class _Call:
    """One request's wire arguments, sent streaming or (as the fallback) not. The body is
    joined from cached encodings (``openai_body``) and posted as it is."""

    client: AsyncOpenAI
    request: ModelRequest
    max_output_tokens: int | None
    encoder: ChatBodyEncoder

    async def open(self) -> OpenStream:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        body = self.encoder.body(self.request, max_tokens=self._max_tokens(), stream=True)
        stream = await self.client.post(
            CHAT_PATH,
            cast_to=ChatCompletion,
            content=body,
            options=_AUTH,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        response = stream.response
        try:
            retry.check_answer(
                str(response.request.url),
                response.status_code,
                response.headers,
                expect="text/event-stream",
                redirected_from=retry.redirected_from(response),
            )
        except retry.NotTheApiError:
            await stream.close()
            raise
        return stream, await retry.first_event(stream, "chunk")

    async def create(self) -> ChatCompletion:
        from openai.types.chat import ChatCompletion

        body = self.encoder.body(self.request, max_tokens=self._max_tokens(), stream=False)
        return await self.client.post(
            CHAT_PATH, cast_to=ChatCompletion, content=body, options=_AUTH
        )

    def _max_tokens(self) -> int | None:
        # Without a configured cap we send none: vLLM rejects prompt + max_tokens beyond its
        # context length, and every server defaults to "the room left in the context".
        if self.max_output_tokens is None:
            return None
        return min(self.request.max_tokens, self.max_output_tokens)


def _faults(base_url: str) -> retry.SdkFaults:
    import httpx2
    import openai

    def classify(exc: Exception) -> retry.Failure | None:
        return _classify(exc, f"model server at {base_url}")

    return retry.SdkFaults(classify, (httpx2.TransportError, openai.APIError), _describe_fault)


def _classify(exc: Exception, server: str = "model server") -> retry.Failure | None:
    """``server``: how a failure to reach it names it (with its URL: the user's setting)."""
    import httpx2
    import openai

    redirected = retry.redirect_failure(exc)
    if redirected is not None:
        return redirected
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc, exc.status_code, exc.response.headers, exc.response, server)
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
        return retry.timed_out(server)
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError | retry.EmptyStreamError):
        return retry.connection_lost(exc, server)
    if isinstance(exc, openai.APIError):
        # An error chunk instead of the first chunk: the server failed while starting.
        return _status_failure(exc, 500, None, server=server)
    return None


def _describe_fault(exc: Exception) -> str:
    detail = exc.__cause__ or exc  # the SDK wraps a cut connection in APIConnectionError
    return f"stream broke: {type(detail).__name__}: {detail}"


def _status_failure(
    exc: APIError,
    status: int,
    headers: Mapping[str, str] | None,
    response: httpx2.Response | None = None,
    server: str = "model server",
) -> retry.Failure:
    message = _api_message(exc.body, exc.message)
    body = _error_object(exc.body)
    kind = " ".join(str(v) for v in (exc.code, body.get("type")) if v)
    if status in OVERFLOW_STATUSES and is_overflow(f"{message} {kind}"):
        found = read_overflow(message, body)
        error = PromptTooLongError(
            message, status=status, tokens=found.tokens, limit=found.limit, output=found.output
        )
        return retry.Failure("prompt too long", False, error)
    if status == 404:  # a model it does not serve, or a URL that is not the API's root
        message += "; check that it serves this model and that the URL is the API's root "
        message += "(usually ending in /v1)"
    return retry.status_failure(
        status,
        message,
        headers,
        api_error=f"{server}: error",
        retry_statuses=(408, 429),
        reasons={429: "rate limited", 408: "request timeout"},
        url=str(response.request.url) if response is not None else None,
        redirected_from=retry.redirected_from(response) if response is not None else None,
    )


def _error_object(body: object) -> dict[str, object]:
    """The error object of an error body as the SDK keeps it (its ``error`` member, else the
    whole body): a dict, or the first of a list (Gemini's OpenAI-compatible endpoint answers
    ``[{"error": {...}}]``), unwrapped down to the object with the ``message``."""
    for _ in range(3):
        if isinstance(body, list) and body:
            body = cast("list[object]", body)[0]
        if not isinstance(body, dict):
            return {}
        fields = cast("dict[str, object]", body)
        inner: object = fields.get("error")
        if "message" in fields or not isinstance(inner, dict | list):
            return fields
        body = cast("object", inner)
    return {}


def _api_message(body: object, fallback: str) -> str:
    """The server's own words: the error object's ``message``, or an ``error`` that is a
    string (LM Studio's ``{"error": "..."}``, TGI's ``{"error": "...", "error_type": ...}``:
    the SDK keeps the string itself), else the SDK's ``fallback``."""
    if isinstance(body, str) and body.strip():
        return body
    fields = _error_object(body)
    for key in ("message", "error", "detail"):
        value = fields.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return fallback


@dataclass
class _ToolCall:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list[str])
    started: bool = False
    ready: ToolUseBlock | None = None


class _StreamState:
    """Accumulates chunks: text, reasoning, and tool calls by index."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: dict[int, _ToolCall] = {}
        self._usage = TokenUsage()
        self._finish_reason: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if chunk.usage is not None:
            self._usage = usage(chunk.usage)
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            thinking = reasoning(delta)
            if thinking:
                self._thinking.append(thinking)
                out.append(ThinkingDelta(thinking))
            if delta.content:
                self._text.append(delta.content)
                out.append(TextDelta(delta.content))
            for call in delta.tool_calls or []:
                out.extend(self._tool_call_delta(call))
            if choice.finish_reason is not None:
                self._finish_reason = choice.finish_reason
        return out

    def _tool_call_delta(self, delta: ChoiceDeltaToolCall) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        call = self._calls.get(delta.index)
        if call is None:
            # Servers stream tool calls one after another: a new index completes the others.
            out.extend(self._ready_all())
            call = self._calls[delta.index] = _ToolCall(delta.id or fallback_call_id())
        if delta.function is not None:
            if delta.function.name:
                call.name = delta.function.name
            if delta.function.arguments:
                call.arguments.append(delta.function.arguments)
        if call.name and not call.started:
            call.started = True
            out.append(ToolUseStarted(call.id, call.name))
        return out

    def _ready_all(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if call.ready is not None:
                continue
            if not call.started:
                call.started = True
                out.append(ToolUseStarted(call.id, call.name))
            call.ready = tool_use(call.id, call.name, "".join(call.arguments))
            out.append(ToolUseReady(call.ready))
        return out

    def incomplete(self) -> str | None:
        return None if self._finish_reason else "the stream ended without a finish_reason"

    def finish(self) -> list[StreamEvent]:
        out = self._ready_all()
        blocks: list[Block] = []
        if self._thinking:
            blocks.append(ThinkingBlock(thinking="".join(self._thinking)))
        if self._text:
            blocks.append(TextBlock(text="".join(self._text)))
        calls = (self._calls[index].ready for index in sorted(self._calls))
        blocks.extend(call for call in calls if call is not None)
        reason = stop_reason(self._finish_reason, has_tool_calls=bool(self._calls))
        out.append(Completed(Message(role="assistant", content=blocks), reason, self._usage))
        return out
