"""How a request body reaches the Messages API, and how its answer is read.

Two ways, one interface (``MessagesTransport``):

* ``DirectTransport``: our own HTTP client (``httpx2``, which the SDK uses too) with the
  headers the SDK would send. Used whenever the caller's credentials are an API key or a
  bearer token, which is nearly always. The SDK's import alone costs about a second
  (``python -X importtime -c "import anthropic"``: 1.0-1.4 s and 3,000 modules on our
  2-core machine, against 0.07 s for ``httpx2``); a cold ``tether -p`` paid it before its
  first request, and every request paid the SDK's request building and event models.
* ``SdkTransport``: the SDK's client, for credentials only the SDK knows how to obtain
  (``ANTHROPIC_PROFILE`` and the active profile on disk, workload identity federation).

Either way the response is read by ``EventReader`` (server-sent events into our own small
models, ``anthropic_events``), and an API refusal is an ``ApiStatusError``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Protocol

import httpx2
from pydantic import ValidationError

from tether.providers.anthropic_events import WireErrorBody, WireEvent, WireMessage
from tether.providers.retry import check_answer, redirected_from

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

MESSAGES_PATH = "/v1/messages"
API_VERSION = "2026-10-21"
"""The ``anthropic-version`` header: the SDK's ``ANTHROPIC_API_VERSION`` (a test checks the
installed SDK agrees)."""
STREAM_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
"""The events a message stream is made of; others (``ping``, future kinds) are skipped, as
the SDK skips them."""


class ApiStatusError(Exception):
    """The API refused a request (HTTP status >= 400), or sent an ``error`` event in the
    middle of a stream (``status`` 200: its ``type`` says what it would have been)."""

    def __init__(
        self,
        status: int,
        type: str,
        message: str,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        redirected_from: str | None = None,
    ) -> None:
        super().__init__(f"{status} {type}: {message}")
        self.status = status
        self.type = type
        self.message = message
        self.headers: Mapping[str, str] = headers or {}
        self.url = url
        """The URL that answered (None: an ``error`` event mid-stream)."""
        self.redirected_from = redirected_from


class EventReader:
    """A streaming response's events (implements ``retry.EventStream``)."""

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response
        self._lines: AsyncIterator[str] = response.aiter_lines()

    def __aiter__(self) -> EventReader:
        return self

    async def __anext__(self) -> WireEvent:
        while True:
            name, data = await self._next_sse()
            if name == "error":
                raise _error_event(data)
            if name in STREAM_EVENTS:
                try:
                    return WireEvent.model_validate_json(data)
                except ValidationError as e:
                    raise ApiStatusError(200, "api_error", f"unreadable {name} event: {e}")

    async def _next_sse(self) -> tuple[str, str]:
        """The next event with data (the SSE rules: ``event:`` and ``data:`` lines, a blank
        line ends an event, ``:`` starts a comment)."""
        name = ""
        data: list[str] = []
        async for line in self._lines:
            if not line:
                if data:
                    return name or "message", "\n".join(data)
                name = ""
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:  # the last event, without its blank line
            return name or "message", "\n".join(data)
        raise StopAsyncIteration

    async def close(self) -> None:
        await self._response.aclose()


def _error_event(data: str) -> ApiStatusError:
    try:
        error = WireErrorBody.model_validate_json(data).error
    except ValidationError:
        error = None
    if error is None:
        return ApiStatusError(200, "api_error", f"error event: {data[:200]}")
    return ApiStatusError(200, error.type, error.message)


def status_error(response: httpx2.Response, body: bytes) -> ApiStatusError:
    """An error response as ``ApiStatusError`` (its JSON ``error``, or the raw text)."""
    status, headers, url = response.status_code, response.headers, str(response.request.url)
    first = redirected_from(response)
    try:
        error = WireErrorBody.model_validate_json(body).error
    except ValidationError:
        error = None
    if error is not None:
        return ApiStatusError(status, error.type, error.message, headers, url, first)
    text = body.decode("utf-8", "replace").strip()[:500] or f"HTTP {status}"
    return ApiStatusError(status, "api_error", text, headers, url, first)


class MessagesTransport(Protocol):
    mid_stream: tuple[type[Exception], ...]
    """What breaks a stream already under way (recovered by a fallback request)."""

    async def open(self, body: bytes, headers: Mapping[str, str]) -> EventReader: ...

    async def create(
        self, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> WireMessage: ...

    async def close(self) -> None: ...


def custom_headers(raw: str | None) -> dict[str, str]:
    """``ANTHROPIC_CUSTOM_HEADERS``: ``Name: value`` lines, read as the SDK reads them."""
    parsed: dict[str, str] = {}
    for line in (raw or "").split("\n"):
        name, colon, value = line.partition(":")
        if colon:
            parsed[name.strip()] = value.strip()
    return parsed


class DirectTransport:
    mid_stream: tuple[type[Exception], ...] = (httpx2.TransportError, ApiStatusError)

    def __init__(
        self, base_url: str, headers: Mapping[str, str], http: httpx2.AsyncClient, *, version: str
    ) -> None:
        """``http``: a client with the caller's proxies, trust store and timeouts."""
        self._url = base_url.rstrip("/") + MESSAGES_PATH
        self._headers = {
            "accept": "application/json",
            "content-type": "application/json",
            "user-agent": f"tether/{version}",
            "anthropic-version": API_VERSION,
            **headers,
        }
        self._http = http

    async def open(self, body: bytes, headers: Mapping[str, str]) -> EventReader:
        request = self._http.build_request(
            "POST", self._url, content=body, headers={**self._headers, **headers}
        )
        response = await self._http.send(request, stream=True)
        try:
            if response.status_code >= 400:
                raise status_error(response, await response.aread())
            _check_followed(response, "text/event-stream")
        except BaseException:
            await response.aclose()
            raise
        return EventReader(response)

    async def create(
        self, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> WireMessage:
        response = await self._http.post(
            self._url, content=body, headers={**self._headers, **headers}, timeout=timeout_s
        )
        if response.status_code >= 400:
            raise status_error(response, response.content)
        _check_followed(response, "application/json")
        return _whole(response.content)

    async def close(self) -> None:
        await self._http.aclose()


class SdkTransport:
    """The SDK's client sends (its credentials, its headers); we read the raw response."""

    def __init__(self, client: AsyncAnthropic) -> None:
        import anthropic

        self._client = client
        self.mid_stream: tuple[type[Exception], ...] = (
            httpx2.TransportError,
            ApiStatusError,
            anthropic.APIError,
        )

    async def open(self, body: bytes, headers: Mapping[str, str]) -> EventReader:
        response = await self._client.post(
            MESSAGES_PATH,
            cast_to=httpx2.Response,
            content=body,
            options={"headers": dict(headers)},
            stream=True,
        )
        try:
            _check_followed(response, "text/event-stream")
        except BaseException:
            await response.aclose()
            raise
        return EventReader(response)

    async def create(
        self, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> WireMessage:
        response = await self._client.post(
            MESSAGES_PATH,
            cast_to=httpx2.Response,
            content=body,
            options={"headers": dict(headers), "timeout": timeout_s},
        )
        _check_followed(response, "application/json")
        return _whole(response.content)

    async def close(self) -> None:
        await self._client.close()


def _check_followed(response: httpx2.Response, expect: str) -> None:
    """Clients follow redirects (``retry.refuse_moved_post``): name where it started too."""
    check_answer(
        str(response.request.url),
        response.status_code,
        response.headers,
        expect=expect,
        redirected_from=redirected_from(response),
    )


def _whole(content: bytes) -> WireMessage:
    try:
        return WireMessage.model_validate_json(content)
    except ValidationError as e:
        snippet = json.dumps(content[:200].decode("utf-8", "replace"))
        raise ApiStatusError(200, "api_error", f"unreadable response {snippet}: {e}") from None
