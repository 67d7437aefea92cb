"""A model served by Ollama, through its native chat API (``POST {root}/api/chat``).

Ollama's OpenAI-compatible endpoint cannot be told a context size, and cuts a prompt over
the one the model was loaded with silently. Here every request says the window Tether
sizes the conversation to (``options.num_ctx``) and asks Ollama to refuse rather than cut
(``truncate: false``, ``shift: false``; ``ollama_body``), so the compaction thresholds and
the server use the same number and nothing is dropped unsaid. The window is, in order:
``modelOptions.contextWindow``; the Modelfile's ``num_ctx``; the context Ollama loads the
model with by itself (``discovery.ollama_window``; 4096 from an Ollama too old to say);
32768 when Ollama does not answer. Never more than the model's trained length, which is all
Ollama would load.

Plain HTTP (``httpx2``, no SDK): a stream of JSON lines, read as they come, with the same
recovery as the other providers (``retry.stream_with_recovery``). Ollama's errors are
``{"error": "<text>"}`` with a status, or that object as a line of a stream that had begun
(docs/api/errors.mdx).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Unpack, cast

from tether.errors import ModelError, PromptTooLongError
from tether.providers import retry
from tether.providers.base import Completed, ModelRequest, StreamEvent
from tether.providers.connection import Connection, ConnectionArgs
from tether.providers.convert_ollama import ChatState, Wire, completed_from_object
from tether.providers.discovery import ollama_window
from tether.providers.models import DEFAULT_OUTPUT_CAP, ModelLimits, ModelOptions
from tether.providers.network import NetworkSettings
from tether.providers.ollama_body import ChatBodyEncoder
from tether.providers.openai_compat import check_not_empty
from tether.providers.overflow import OVERFLOW_STATUSES, is_overflow, read_overflow
from tether.providers.watch import Watch
from tether.providers.windows import LearnedWindow

if TYPE_CHECKING:
    import httpx2

DEFAULT_ROOT = "http://localhost:11434"
UNKNOWN_WINDOW = 32_768
"""The window when Ollama does not say (``/api/show`` fails: no such model, or no Ollama
there): the request goes out with it, and Ollama's own answer says what is wrong."""
CHAT_PATH = "/api/chat"
OLLAMA_SETTING = (
    "modelOptions.contextWindow (sent to Ollama as num_ctx; it loads no more than the "
    "model's trained length)"
)
RUNNER_OVERFLOWS = (
    "the input length exceeds the context length",
    "the prompt is longer than the context length currently available",
)
"""Ollama's own runner's refusals of a prompt over ``num_ctx`` (``runner/ollamarunner``
``errorInputTooLong``; ``shift: false``). The runner answers them 400, but Ollama versions
whose ``llm`` client did not relay a runner's status as ``api.StatusError`` (the chat route
then answers ``gin.H{"error": err.Error()}``, a 500) pass them on at 500: these exact words
are an overflow at either status (other 500s stay server errors)."""
STREAM_TYPES = ("application/x-ndjson", "application/json")
"""The content type of a streamed answer (docs/api/streaming.mdx), or plain JSON, which a
proxy in front of Ollama may say of the same lines."""


class OllamaError(Exception):
    """An error Ollama answered: its status and its ``error`` text (status 200: a line of
    a stream that had begun)."""

    def __init__(self, status: int, message: str, response: httpx2.Response | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.response = response


class OllamaProvider:
    """A model behind ``POST {root}/api/chat``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_ROOT,
        options: ModelOptions | None = None,
        **connection: Unpack[ConnectionArgs],
    ):
        self.name = "ollama"
        self.model = model
        self._root = base_url.rstrip("/").removesuffix("/v1")
        env = connection.get("caller_env")
        key = connection.get("api_key") or (os.environ if env is None else env).get(
            "OLLAMA_API_KEY"
        )
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._conn = Connection.of(self._root, options, **connection)
        self._options = self._conn.options
        self._discovered: int | None = None
        self._trained: int | None = None
        self._asked = False
        self._http: httpx2.AsyncClient | None = None
        self._encoder = ChatBodyEncoder()
        self._window = LearnedWindow(self._conn.windows, self._root, model, key or None)

    @property
    def context_window(self) -> int:
        """The window every request sends as ``num_ctx`` (see the module's docstring); less
        where a refusal named less."""
        setting = self._options.context_window
        window = setting or self._discovered or UNKNOWN_WINDOW
        if self._trained:
            window = min(window, self._trained)
        return self._window.cap(window, explicit=bool(setting))

    @property
    def limits(self) -> ModelLimits:
        window = self.context_window
        cap = self._options.max_output_tokens or min(DEFAULT_OUTPUT_CAP, max(window // 4, 256))
        return ModelLimits(
            window,
            cap,
            cap,
            "none",
            window_setting=OLLAMA_SETTING,
            learned=self._window.learned(window),
            refuses_over_window=True,
        )

    async def discover_window(self, *, again: bool = False) -> None:
        """Ask Ollama for the model's window once; ``again`` only if it did not say: the
        window it said is the one every request sends, and asking again would load the
        model once more without it."""
        if self._asked and (not again or self._discovered is not None):
            if again:  # an earlier session's window may be out of date
                self._window.retry()
            return
        self._asked = True
        settled = bool(self._options.context_window)
        network = self._conn.network
        found, trained = await ollama_window(
            self._root, self.model, self._headers, network, settled=settled
        )
        self._trained = trained or self._trained
        if found is not None:
            self._window.announced()
            self._discovered = found
        elif again:
            self._window.retry()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _client(self) -> httpx2.AsyncClient:
        if self._http is None:
            network = self._conn.network or NetworkSettings.of(os.environ)
            self._http = network.client(
                None,
                event_hooks=retry.MODEL_CLIENT_HOOKS,
                follow_redirects=True,
                timeout=self._conn.timeout_s,
                headers=self._headers,
            )
        return self._http

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        await self.discover_window()
        request = request if request.model else replace(request, model=self.model)
        cap = self._options.max_output_tokens
        call = _Call(
            self._client(),
            f"{self._root}{CHAT_PATH}",
            request,
            self._encoder,
            num_ctx=self.context_window,
            num_predict=min(request.max_tokens, cap) if cap else request.max_tokens,
            think=False if self._options.thinking == "off" else None,
        )
        recovering = retry.stream_with_recovery(
            self._conn.policy,
            _faults(self._root, request.model),
            open_stream=call.open,
            state=ChatState(),
            fallback=call.create,
            watch=Watch(self._conn.patience, self._root),
        )
        try:
            async with aclosing(recovering) as events:
                async for event in events:
                    if isinstance(event, Completed):
                        check_not_empty(event, self._root)
                        self._window.accepted(request.model, event.usage.context_tokens)
                    yield event
        except PromptTooLongError as e:
            self._window.refused(request.model, e.limit, str(e))
            raise


@dataclass(frozen=True)
class _Call:
    """One request, sent streaming or (as the fallback) not."""

    client: httpx2.AsyncClient
    url: str
    request: ModelRequest
    encoder: ChatBodyEncoder
    num_ctx: int
    num_predict: int | None
    think: bool | None

    def _body(self, stream: bool) -> bytes:
        return self.encoder.body(
            self.request,
            num_ctx=self.num_ctx,
            num_predict=self.num_predict,
            think=self.think,
            stream=stream,
        )

    async def open(self) -> tuple[_Lines, Wire]:
        response = await self._send(stream=True)
        kind = retry.media_type(response.headers)
        try:
            retry.check_answer(
                str(response.request.url),
                response.status_code,
                response.headers,
                expect=kind if kind in STREAM_TYPES else STREAM_TYPES[0],
                redirected_from=retry.redirected_from(response),
            )
        except retry.NotTheApiError:
            await response.aclose()
            raise
        lines = _Lines(response)
        return lines, await retry.first_event(lines, "line")

    async def create(self) -> Completed:
        response = await self._send(stream=False)
        try:
            retry.check_answer(
                str(response.request.url),
                response.status_code,
                response.headers,
                expect="application/json",
                redirected_from=retry.redirected_from(response),
            )
            text = (await response.aread()).decode("utf-8", "replace")
        finally:
            await response.aclose()
        try:
            data: object = json.loads(text)
        except ValueError:
            raise OllamaError(200, f"the answer is not JSON: {text[:200]!r}", response) from None
        answer = cast("Wire", data) if isinstance(data, dict) else {}
        error = answer.get("error")
        if isinstance(error, str):
            raise OllamaError(200, error, response)
        if answer.get("done") is not True:
            raise OllamaError(200, f"the answer is not done: {text[:200]!r}", response)
        return completed_from_object(answer)

    async def _send(self, *, stream: bool) -> httpx2.Response:
        request = self.client.build_request(
            "POST",
            self.url,
            content=self._body(stream),
            headers={"Content-Type": "application/json"},
        )
        response = await self.client.send(request, stream=True)
        if response.status_code >= 400:
            try:
                text = (await response.aread()).decode("utf-8", "replace")
            finally:
                await response.aclose()
            raise OllamaError(response.status_code, _error_text(text), response)
        return response


def _error_text(text: str) -> str:
    """Ollama's ``{"error": "<text>"}``: the text (else the body as it is)."""
    try:
        data: object = json.loads(text)
    except ValueError:
        return text.strip()
    error = cast("Wire", data).get("error") if isinstance(data, dict) else None
    return error if isinstance(error, str) and error else text.strip()


class _Lines:
    """The JSON lines of a streamed answer; an ``{"error": ...}`` line raises ``OllamaError``."""

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response
        self._lines = response.aiter_lines()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> Wire:
        while True:
            line = (await anext(self._lines)).strip()
            if not line:
                continue
            try:
                data: object = json.loads(line)
            except ValueError:
                raise OllamaError(
                    200, f"a line of the stream is not JSON: {line[:200]!r}"
                ) from None
            if not isinstance(data, dict):
                raise OllamaError(200, f"a line of the stream is not an object: {line[:200]!r}")
            wire = cast("Wire", data)
            error = wire.get("error")
            if error is not None:
                raise OllamaError(200, str(error), self._response)
            return wire

    async def close(self) -> None:
        await self._response.aclose()


def _faults(root: str, model: str) -> retry.SdkFaults:
    import httpx2

    def classify(exc: Exception) -> retry.Failure | None:
        return _classify(exc, root, model)

    return retry.SdkFaults(classify, (httpx2.TransportError, OllamaError), _describe)


def _describe(exc: Exception) -> str:
    return f"stream broke: {type(exc).__name__}: {exc}"


def _classify(exc: Exception, root: str, model: str) -> retry.Failure | None:
    import httpx2

    server = f"Ollama at {root}"
    redirected = retry.redirect_failure(exc)
    if redirected is not None:
        return redirected
    if isinstance(exc, OllamaError):
        return _status_failure(exc, server, model)
    if isinstance(exc, httpx2.TimeoutException):
        return retry.timed_out(server)
    if isinstance(exc, httpx2.ConnectError):
        failure = retry.connection_lost(exc, server)
        hint = " (is Ollama running? start it with `ollama serve`)"
        error = ModelError(str(failure.error) + hint, retryable=True)
        return retry.Failure(failure.reason, True, error)
    if isinstance(exc, httpx2.TransportError | retry.EmptyStreamError):
        return retry.connection_lost(exc, server)
    return None


def _status_failure(exc: OllamaError, server: str, model: str) -> retry.Failure:
    message, status = exc.message, exc.status
    runner = status == 500 and any(w in message.lower() for w in RUNNER_OVERFLOWS)
    if runner or (status in (*OVERFLOW_STATUSES, 200) and is_overflow(message)):
        found = read_overflow(message, {})
        error = PromptTooLongError(
            message,
            status=status if status not in (200, 500) else 400,
            tokens=found.tokens,
            limit=found.limit,
            output=found.output,
        )
        return retry.Failure("prompt too long", False, error)
    if status == 404 and "not found" in message and model in message:
        message += f"; pull it with `ollama pull {model}` (or use a name `ollama list` shows)"
    elif status == 404:
        message += f"; check that {server.removeprefix('Ollama at ')} is Ollama's root URL"
    elif "does not support tools" in message:
        message += "; Tether needs a model that can call tools (ollama.com/search?c=tools)"
    response = exc.response
    return retry.status_failure(
        status if status != 200 else 500,
        message,
        response.headers if response is not None else None,
        api_error=f"{server}: error",
        retry_statuses=(429,),
        reasons={429: "rate limited"},
        url=str(response.request.url) if response is not None else None,
        redirected_from=retry.redirected_from(response) if response is not None else None,
    )
