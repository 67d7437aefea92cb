"""The Anthropic provider: Claude through the Messages API.

We stream raw events (``stream: true``) rather than use the SDK's ``messages.stream()``
helper, which re-parses the partial tool input on every ``input_json_delta`` and hides
where a tool's JSON stopped: we need the raw fragments to tell a complete tool input from
one cut off by ``max_tokens``, and the raw events map one-to-one onto ours
(``anthropic_stream``).

Bodies are built by ``anthropic_body.BodyEncoder`` from cached per-message encodings and
sent as raw content, by our own HTTP client when the caller has a key or a token, by the
SDK's when only the SDK can find the credentials (``anthropic_transport`` says why).

Recovery is ``retry.stream_with_recovery``: failures before the first event are retried with
backoff; a stream that breaks after it becomes ``StreamReset`` plus one non-streaming request
under the same retry policy.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Unpack

import httpx2

from tether import __version__
from tether.errors import ModelError, PromptTooLongError
from tether.providers.anthropic_body import BodyEncoder
from tether.providers.anthropic_events import WireEvent
from tether.providers.anthropic_stream import StreamState
from tether.providers.anthropic_transport import (
    ApiStatusError,
    DirectTransport,
    EventReader,
    MessagesTransport,
    SdkTransport,
    custom_headers,
)
from tether.providers.auth import ApiKeyHelper
from tether.providers.base import Completed, ModelRequest, StreamEvent
from tether.providers.connection import ClientCache, Connection, ConnectionArgs
from tether.providers.convert_anthropic import completed_from_response
from tether.providers.models import (
    MIN_THINKING_BUDGET,
    ModelLimits,
    ModelOptions,
    anthropic_limits,
    effective_limits,
    thinking_kind,
)
from tether.providers.network import NetworkSettings
from tether.providers.overflow import OVERFLOW_STATUSES, is_overflow, read_overflow
from tether.providers.retry import (
    MODEL_CLIENT_HOOKS,
    EmptyStreamError,
    Failure,
    SdkFaults,
    connection_lost,
    first_event,
    redirect_failure,
    redirected_from,
    status_failure,
    stream_with_recovery,
    timed_out,
)
from tether.providers.watch import Watch
from tether.providers.windows import LearnedWindow

if TYPE_CHECKING:
    from anthropic.types import ThinkingConfigParam

DEFAULT_BASE_URL = "https://api.anthropic.com"
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
NO_CREDENTIALS = "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"


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
        """``caller_env`` (in ``connection``): the caller's variables, where a key, token, base
        URL, proxies or ``ANTHROPIC_CUSTOM_HEADERS`` not given here are looked for (None: this
        process's)."""
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
        self._clients: ClientCache[MessagesTransport] = ClientCache(self._make_transport)
        self._encoder = BodyEncoder()
        self._window = LearnedWindow(
            self._conn.windows, self._endpoint(), model, self._credential()
        )

    def _endpoint(self) -> str:
        caller = self._conn.caller_env
        env = os.environ if caller is None else caller
        return self._conn.base_url or env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL

    def _credential(self) -> str | None:
        """What identifies the account a window is learned for: the key or token, the
        ``apiKeyHelper`` command (its keys rotate), or the SDK profile."""
        caller = self._conn.caller_env
        env = os.environ if caller is None else caller
        if self._options.api_key_helper:
            return f"apiKeyHelper {self._options.api_key_helper}"
        return (
            self._conn.api_key
            or env.get("ANTHROPIC_API_KEY")
            or self._auth_token
            or env.get("ANTHROPIC_AUTH_TOKEN")
            or env.get("ANTHROPIC_PROFILE")
            or None
        )

    @property
    def context_window(self) -> int:
        """The model's window (or the setting's), or less where the server said less (an
        explicit setting: only a refusal in this session makes it less)."""
        explicit = self._options.context_window is not None
        return self._window.cap(self._limits.window, explicit=explicit)

    @property
    def limits(self) -> ModelLimits:
        window = self.context_window
        if window == self._limits.window:
            return self._limits
        return replace(self._limits, window=window, learned=self._window.learned(window))

    async def discover_window(self, *, again: bool = False) -> None:
        """The Messages API reports no window: the model table's (or a learned one) holds;
        ``again``: an earlier session's learned window may be out of date."""
        if again:
            self._window.retry()

    async def aclose(self) -> None:
        await self._clients.aclose()

    async def _transport(self) -> MessagesTransport:
        if self._key_helper is None:
            return await self._clients.get(self._conn.api_key)
        # apiKeyHelper: its key (fetched again once stale) picks the client.
        return await self._clients.get(await self._key_helper.key())

    def _make_transport(self, api_key: str | None) -> MessagesTransport:
        caller = self._conn.caller_env
        env = os.environ if caller is None else caller
        key = api_key or env.get("ANTHROPIC_API_KEY") or None
        token = None if key else self._auth_token or env.get("ANTHROPIC_AUTH_TOKEN") or None
        if key is None and token is None:
            return self._sdk_transport()
        # The headers the SDK sends: the key (or token) as a bearer token; a helper's key in
        # X-Api-Key too, since proxies read either.
        headers = {**custom_headers(env.get("ANTHROPIC_CUSTOM_HEADERS"))}
        headers["authorization"] = f"Bearer {key or token}"
        if self._key_helper is not None and key:
            headers["x-api-key"] = key
        base_url = self._conn.base_url or env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        # The caller's proxies and CA certificates (in-process, this process's), with a trust
        # store loaded once per CA choice rather than once per client.
        network = self._conn.network or NetworkSettings.of(os.environ)
        timeout = httpx2.Timeout(self._conn.timeout_s, connect=min(5.0, self._conn.timeout_s))
        # Redirects are followed as the SDK's client follows them, except those that are not
        # the API's (``retry.refuse_moved_post``).
        http = network.client(
            timeout=timeout, follow_redirects=True, event_hooks=MODEL_CLIENT_HOOKS
        )
        return DirectTransport(base_url, headers, http, version=__version__)

    def _sdk_transport(self) -> MessagesTransport:
        """No key or token: the SDK looks for credentials itself (profiles, federation)."""
        import anthropic

        caller = self._conn.caller_env
        profile = caller.get("ANTHROPIC_PROFILE") if caller is not None else None
        if caller is not None and not profile:
            # Served for a caller with no key, token or profile: the SDK would take the
            # daemon's own credentials from this process's environment. Never.
            raise ModelError(NO_CREDENTIALS)
        network = self._conn.network or NetworkSettings.of(os.environ)
        http = network.client(anthropic.DefaultAsyncHttpxClient, event_hooks=MODEL_CLIENT_HOOKS)
        try:
            # Its own retries are off: see retry.py. A named profile keeps the SDK from
            # consulting this process's environment for credentials.
            client = anthropic.AsyncAnthropic(
                profile=profile,
                base_url=self._conn.base_url,
                max_retries=0,
                timeout=self._conn.timeout_s,
                http_client=http,
            )
        except anthropic.CredentialsError as e:
            # A profile that is missing or unreadable: the SDK's message names the file and fix.
            raise ModelError(f"Anthropic credentials: {e}") from None
        return SdkTransport(client)

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
        asked = request.model or self.model  # the window learned is that model's only
        try:
            async with aclosing(self._stream(request)) as events:
                async for event in events:
                    if isinstance(event, Completed):
                        self._window.accepted(asked, event.usage.context_tokens)
                    yield event
        except PromptTooLongError as e:
            self._window.refused(asked, e.limit, str(e))
            raise
        except ModelError as e:
            if e.status not in (401, 403):
                raise
            # Which key, sent where: the fix is to that variable or that URL.
            refused = f"{e}; the key from {self._key_source()} was refused by {self._endpoint()}"
            raise ModelError(refused, status=e.status, retryable=e.retryable) from e

    def _key_source(self) -> str:
        caller = self._conn.caller_env
        env = os.environ if caller is None else caller
        if self._key_helper is not None:
            return f"apiKeyHelper `{self._options.api_key_helper}`"
        if self._conn.api_key or env.get("ANTHROPIC_API_KEY"):
            return "ANTHROPIC_API_KEY"
        if self._auth_token or env.get("ANTHROPIC_AUTH_TOKEN"):
            return "ANTHROPIC_AUTH_TOKEN"
        return "the Anthropic SDK's credentials (ANTHROPIC_PROFILE)"

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent]:
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
        transport = await self._transport()
        request = request if request.model else replace(request, model=self.model)
        max_tokens = min(request.max_tokens, self._limits.max_output)
        thinking = self._thinking(request, max_tokens)
        betas = self._betas(thinking)
        headers = {"anthropic-beta": ",".join(betas)} if betas else {}
        body = self._encoder.body(request, max_tokens=max_tokens, thinking=thinking, stream=True)

        async def open_stream() -> tuple[EventReader, WireEvent]:
            """Start a stream and read its first event: until then, failures are retried."""
            stream = await transport.open(body, headers)
            return stream, await first_event(stream, "event")

        async def fallback() -> Completed:
            whole = self._encoder.body(
                request, max_tokens=max_tokens, thinking=thinking, stream=False
            )
            # An explicit timeout: a large max_tokens without streaming takes long.
            response = await transport.create(whole, headers, self._conn.timeout_s)
            return completed_from_response(response)

        return stream_with_recovery(
            self._conn.policy,
            SdkFaults(_classify, transport.mid_stream, _describe_fault),
            open_stream=open_stream,
            state=StreamState(),
            fallback=fallback,
            watch=Watch(self._conn.patience, self._endpoint()),
        )


def _sdk_error(exc: Exception, *names: str) -> bool:
    """``exc`` is one of the SDK's exceptions (only if the SDK was imported at all)."""
    if "anthropic" not in sys.modules:
        return False
    import anthropic

    return any(isinstance(exc, getattr(anthropic, name)) for name in names)


def _classify(exc: Exception) -> Failure | None:
    redirected = redirect_failure(exc)
    if redirected is not None:
        return redirected
    if isinstance(exc, ApiStatusError):
        return _status_failure(
            exc.status, exc.type, exc.message, exc.headers, exc.url, exc.redirected_from
        )
    if _sdk_error(exc, "APIStatusError"):
        import anthropic

        assert isinstance(exc, anthropic.APIStatusError)
        message = exc.api_message or str(exc)
        response = exc.response
        return _status_failure(
            exc.status_code,
            exc.type or "",
            message,
            response.headers,
            str(response.request.url),
            redirected_from(response),
        )
    if isinstance(exc, httpx2.TimeoutException) or _sdk_error(exc, "APITimeoutError"):
        return timed_out("Anthropic API")
    if isinstance(exc, httpx2.TransportError | EmptyStreamError) or _sdk_error(
        exc, "APIConnectionError"
    ):
        return connection_lost(exc, "Anthropic API")
    if isinstance(exc, TypeError) and "authentication" in str(exc):
        # The SDK found no credentials: a setup problem the user must fix, not a crash.
        return Failure(NO_CREDENTIALS, False, ModelError(NO_CREDENTIALS))
    if _sdk_error(exc, "CredentialsError"):  # a profile's token could not be had
        message = f"Anthropic credentials: {exc}"
        return Failure(message, False, ModelError(message))
    return None


def _status_failure(
    status: int,
    kind: str,
    message: str,
    headers: Mapping[str, str],
    url: str | None = None,
    first: str | None = None,
) -> Failure:
    if status == 200:
        status = _ERROR_TYPE_STATUS.get(kind, 400)
    if status in OVERFLOW_STATUSES and is_overflow(message):
        # A gateway in front of the API may word it its own way (``providers/overflow``).
        found = read_overflow(message)
        error = PromptTooLongError(
            message, status=status, tokens=found.tokens, limit=found.limit, output=found.output
        )
        return Failure("prompt too long", False, error)
    return status_failure(
        status,
        message,
        headers,
        api_error="Anthropic API error",
        retry_statuses=(408, 429, 529),
        reasons=_STATUS_REASONS,
        url=url,
        redirected_from=first,
    )


def _describe_fault(exc: Exception) -> str:
    if isinstance(exc, ApiStatusError):
        return f"stream error: {exc.type or 'error'}: {exc.message}"
    if _sdk_error(exc, "APIStatusError"):
        import anthropic

        assert isinstance(exc, anthropic.APIStatusError)
        return f"stream error: {exc.type or 'error'}: {exc.api_message or exc}"
    return f"connection lost mid-stream ({type(exc).__name__}: {exc})"
