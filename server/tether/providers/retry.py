"""Recovery shared by the model providers: bounded exponential backoff with visible
``Retrying`` events, and the ``StreamReset`` + non-streaming fallback for broken streams.

We run our own retry loop and create the SDK clients with ``max_retries=0``:

* Visibility. The SDK sleeps silently inside ``create()``; a user staring at a stalled turn
  should see "overloaded, retrying in 4 s (attempt 2)". Every sleep here is preceded by a
  ``Retrying`` event the engine forwards to the editor.
* Coverage. The SDK only retries until response headers arrive. A stream that breaks after
  that (connection cut, an SSE ``error`` event) is ours to recover, and the recovery request
  must obey the same budget and the same ``retry-after`` handling as the first one.

Each provider supplies a ``classify`` function that turns an exception into a ``Failure``
(retryable or not, with the ``ModelError`` to raise) or ``None`` for exceptions that are
programmer errors and must propagate unchanged, and an ``Accumulator`` that turns its wire
events into ours; ``stream_with_recovery`` does the rest.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from tether.core.messages import (
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
)
from tether.errors import ModelError
from tether.providers.base import (
    Completed,
    Retrying,
    ServerToolFinished,
    ServerToolStarted,
    StreamEvent,
    StreamReset,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
    ToolUseStarted,
    Waiting,
)
from tether.providers.watch import Done, Watch

if TYPE_CHECKING:
    import httpx2

T = TypeVar("T")
E = TypeVar("E")
E_co = TypeVar("E_co", covariant=True)
E_contra = TypeVar("E_contra", contravariant=True)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    retry_after_cap_s: float = 120.0
    """A server may ask for a longer wait than our backoff would choose, but not forever."""

    def delay_s(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after_s is not None and retry_after_s > 0:
            return min(retry_after_s, self.retry_after_cap_s)
        backoff = min(self.base_delay_s * 2 ** (attempt - 1), self.max_delay_s)
        # Jitter downwards only (75-100 %), so max_delay_s stays a true upper bound while
        # clients that failed together still spread out.
        return backoff * (1 - 0.25 * random.random())


@dataclass(frozen=True)
class Failure:
    """What a provider made of an exception raised by a request attempt."""

    reason: str
    """Short and user-facing, e.g. ``overloaded (529)``."""
    retryable: bool
    error: ModelError
    """Raised as-is when the failure is not retryable."""
    retry_after_s: float | None = None


class EmptyStreamError(Exception):
    """A streaming response ended before its first event (retried like a connection error)."""


class NotTheApiError(Exception):
    """The answer is not the API's: a redirect, or a page where an event stream (or JSON)
    should be. A captive portal or a proxy's login page does that; retrying cannot help."""


def media_type(headers: Mapping[str, str] | None) -> str:
    """A ``content-type``'s media type, lower-cased (media types are case-insensitive,
    RFC 9110 section 8.3.1), without its parameters."""
    return (headers or {}).get("content-type", "").split(";")[0].strip().lower()


def check_answer(
    url: str,
    status: int,
    headers: Mapping[str, str],
    *,
    expect: str,
    redirected_from: str | None = None,
) -> None:
    """Raise ``NotTheApiError`` naming the URL, the status and the content type unless the
    answer is a success of the ``expect``ed content type (``text/event-stream`` for a
    stream, ``application/json`` for a whole response). Errors (4xx, 5xx) are the caller's."""
    kind = headers.get("content-type", "")
    if 300 <= status < 400 or (status < 300 and media_type(headers) != expect):
        location = headers.get("location")
        where = f"{url} (redirected from {redirected_from})" if redirected_from else url
        moved = f", to {location}" if location and 300 <= status < 400 else ""
        raise NotTheApiError(
            f"{where} answered HTTP {status} with {kind or 'no content type'}{moved}, not "
            f"{expect}: it is not the model API. A proxy's login page or a captive portal "
            "answers like this; check the base URL and the network."
        )


async def refuse_moved_post(response: httpx2.Response) -> None:
    """A response hook of the model clients. The SDKs' own clients follow redirects
    (``follow_redirects=True`` in ``DefaultAsyncHttpxClient``), and so do Tether's: a 307 or
    308 keeps the method and the body (an API that moved) and is followed. A 301, 302 or 303
    to a POST would be followed as a GET without the body, which no model API answers: it
    is a login page or a captive portal, stopped here with its URL and where it points
    (rather than chased to a host that may not even resolve, and retried as a network
    fault)."""
    if (
        response.request.method == "POST"
        and response.has_redirect_location
        and response.status_code not in (307, 308)
    ):
        raise NotTheApiError(
            f"{response.request.url} answered HTTP {response.status_code} to "
            f"{response.headers.get('location')}: it is not the model API (the API never "
            "redirects a request to a page). A proxy's login page or a captive portal "
            "answers like this; check the base URL and the network."
        )


MODEL_CLIENT_HOOKS: dict[str, list[Callable[[httpx2.Response], Awaitable[None]]]] = {
    "response": [refuse_moved_post]
}
"""``event_hooks`` of every HTTP client that talks to a model API."""


def redirected_from(response: httpx2.Response) -> str | None:
    """Where a followed redirect began (None: the response is the first answer)."""
    return str(response.history[0].request.url) if response.history else None


def redirect_failure(exc: BaseException) -> Failure | None:
    """A redirect that is not the API's (``refuse_moved_post``) or a loop of them, raised by
    the HTTP client or wrapped by an SDK (which makes any client failure a connection
    error): never retried, the same request gets the same redirects."""
    import httpx2

    for cause in (exc, exc.__cause__):
        if isinstance(cause, NotTheApiError):
            return not_the_api(cause)
        if isinstance(cause, httpx2.TooManyRedirects):
            return not_the_api(
                NotTheApiError(
                    f"{cause.request.url} redirects in a loop (too many redirects): it is "
                    "not the model API; check the base URL and the network."
                )
            )
    return None


def not_api_error_page(
    url: str | None, status: int, headers: Mapping[str, str] | None, text: str
) -> str | None:
    """An error status whose body is not an API error but a page (HTML from a proxy, a
    gateway or a captive portal): the words that say so, with the URL, the status and the
    content type; None for a JSON error (or one without a content type)."""
    kind = media_type(headers)
    if not kind or "json" in kind or kind == "text/event-stream":
        return None
    where = url or "the model API"
    found = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    said = (found.group(1) if found else text).strip()[:200]
    hint = (
        "a proxy asks for credentials: put them in the proxy URL "
        "(HTTPS_PROXY=http://user:password@host:port)"
        if status == 407
        else "a proxy, gateway or captive portal answered instead of the API; check the "
        "base URL and the network"
    )
    content = (headers or {}).get("content-type", "")
    return f"{where} answered HTTP {status} with {content} ({said!r}), not an API error: {hint}"


def not_the_api(exc: NotTheApiError) -> Failure:
    """Never retried: the same request gets the same page."""
    return Failure("not the API's answer", False, ModelError(str(exc)))


class EventStream(Protocol[E_co]):
    """An SDK's streaming response: its events, and a way to hang up."""

    def __anext__(self) -> Awaitable[E_co]: ...

    async def close(self) -> None: ...


async def first_event(stream: EventStream[E], what: str) -> E:
    """Read a fresh stream's first event: until it arrives, failures are retried (a stream
    that ends at once is ``EmptyStreamError``); the stream is closed on any failure."""
    try:
        return await anext(stream)
    except StopAsyncIteration:
        await stream.close()
        raise EmptyStreamError(f"the response ended before its first {what}") from None
    except BaseException:
        await stream.close()
        raise


def timed_out(api: str) -> Failure:
    return Failure("request timed out", True, ModelError(f"{api}: request timed out"))


def connection_lost(exc: Exception, api: str) -> Failure:
    detail = exc.__cause__ or exc
    reason = f"connection error ({type(detail).__name__}: {detail})"
    return Failure(reason, True, ModelError(f"{api}: {reason}"))


def status_failure(
    status: int,
    message: str,
    headers: Mapping[str, str] | None,
    *,
    api_error: str,
    retry_statuses: tuple[int, ...],
    reasons: Mapping[int, str],
    url: str | None = None,
    redirected_from: str | None = None,
) -> Failure:
    """An HTTP error status: retried when the status says so (or 5xx), unless the server
    says otherwise (``x-should-retry``), after the wait it asks for (``retry-after``)."""
    retryable = status in retry_statuses or status >= 500
    verdict = should_retry_header(headers)
    retryable = retryable if verdict is None else verdict
    reason = reasons.get(status) or ("server error" if status >= 500 else "HTTP error")
    page = not_api_error_page(url, status, headers, message)
    text = page or f"{api_error} {status}: {message}"
    if redirected_from:
        # httpx drops the Authorization header on a redirect to another host (as it should).
        text += (
            f" (answered by {url} after a redirect from {redirected_from}; credentials are "
            "not sent on to another host)"
        )
    error = ModelError(text, status=status, retryable=retryable)
    return Failure(f"{reason} ({status})", retryable, error, parse_retry_after(headers))


@dataclass(frozen=True)
class Opened(Generic[T]):
    """The successful result of ``with_retries``; always its last item."""

    value: T


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` (Anthropic, OpenAI) or ``retry-after`` (seconds).

    The HTTP-date form of ``retry-after`` is ignored: APIs we talk to send seconds.
    """
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) / scale
        except ValueError:
            continue
    return None


def should_retry_header(headers: Mapping[str, str] | None) -> bool | None:
    """The server's explicit verdict (``x-should-retry: true|false``), if it gave one."""
    value = (headers or {}).get("x-should-retry")
    return {"true": True, "false": False}.get(value or "")


async def with_retries(
    policy: RetryPolicy,
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[Exception], Failure | None],
    watch: Watch | None = None,
    *,
    whole: bool = False,
) -> AsyncIterator[Retrying | Waiting | Opened[T]]:
    """Run ``attempt`` until it succeeds, yielding ``Retrying`` before each backoff sleep
    and, with a ``watch``, ``Waiting`` while an attempt has nothing back yet.

    Ends with one ``Opened(result)``, or raises the failure's ``ModelError`` (not retryable)
    or a retryable ``ModelError`` once ``policy.max_retries`` retries are spent. An attempt
    that outlives the watch's wait (the first answer, or the ``whole`` answer) is not
    retried: the same server would keep the user waiting as long again.
    """
    retries = 0
    while True:
        try:
            if watch is None:
                result = await attempt()
            else:
                done: Done[T] | None = None
                async for tick in watch.first_answer(attempt, whole=whole):
                    if isinstance(tick, Done):
                        done = tick
                    else:
                        yield tick
                assert done is not None
                result = done.value
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable:
                raise failure.error from exc
            if retries >= policy.max_retries:
                # The last answer's own words too: a proxy's error page says what is wrong.
                said = str(failure.error)
                message = (
                    f"{said}; gave up after {retries} retries"
                    if said.endswith(failure.reason)
                    else f"{failure.reason}; gave up after {retries} retries ({said})"
                )
                raise ModelError(
                    message,
                    status=failure.error.status,
                    retryable=True,
                ) from exc
            retries += 1
            delay = policy.delay_s(retries, failure.retry_after_s)
            yield Retrying(attempt=retries, delay_s=delay, reason=failure.reason)
            await asyncio.sleep(delay)
            continue
        yield Opened(result)
        return


def replay(completed: Completed) -> Iterator[StreamEvent]:
    """The events a stream of ``completed`` would have produced, ending with it.

    Used after a ``StreamReset``: the non-streaming fallback's full response is replayed so
    the engine sees the same event shapes as from a stream.
    """
    for block in completed.message.content:
        if isinstance(block, TextBlock):
            yield TextDelta(block.text)
        elif isinstance(block, ThinkingBlock):
            yield ThinkingDelta(block.thinking)
            yield ThinkingReady(block)
        elif isinstance(block, RedactedThinkingBlock):
            yield ThinkingReady(block)
        elif isinstance(block, ToolUseBlock):
            yield ToolUseStarted(block.id, block.name)
            yield ToolUseReady(block)
        elif isinstance(block, ServerToolUseBlock):
            yield ServerToolStarted(block)
        elif isinstance(block, WebSearchToolResultBlock):
            yield ServerToolFinished(block)
    yield completed


class WireStream(Protocol[E_co]):
    """An SDK's open event stream (``AsyncStream`` of either SDK)."""

    def __anext__(self) -> Awaitable[E_co]: ...

    async def close(self) -> None: ...


class Accumulator(Protocol[E_contra]):
    """Turns one response's wire events into ours and assembles the final message."""

    def feed(self, event: E_contra, /) -> list[StreamEvent]: ...

    def incomplete(self) -> str | None:
        """Why the events so far do not make a whole response (None: they do)."""
        ...

    def finish(self) -> list[StreamEvent]:
        """The events that close a whole response, ending with ``Completed``."""
        ...


@dataclass(frozen=True)
class SdkFaults:
    """How one SDK fails: ``classify`` judges an exception from a request attempt;
    ``mid_stream`` are the exceptions that break a stream already under way, which
    ``describe`` puts in words for the ``StreamReset``."""

    classify: Callable[[Exception], Failure | None]
    mid_stream: tuple[type[Exception], ...]
    describe: Callable[[Exception], str]


async def stream_with_recovery(
    policy: RetryPolicy,
    faults: SdkFaults,
    *,
    open_stream: Callable[[], Awaitable[tuple[WireStream[E], E]]],
    state: Accumulator[E],
    fallback: Callable[[], Awaitable[Completed]],
    watch: Watch,
) -> AsyncGenerator[StreamEvent, None]:
    """Stream one response, recovering the way both providers do.

    ``open_stream`` starts the request and reads the first event; until then every failure
    is retried with backoff. A fault after that (``mid_stream_faults``, or a body that ends
    early) voids what was streamed: we yield ``StreamReset`` and replay the result of one
    non-streaming ``fallback`` request, itself retried under the same policy. ``watch``
    bounds the waits (``patience``): for the first event, and between events, where a
    stream that went silent is given up (a stalled server would stall the fallback too).
    """
    classify = faults.classify
    opened: tuple[WireStream[E], E] | None = None
    async for item in with_retries(policy, open_stream, classify, watch):
        if isinstance(item, Opened):
            opened = item.value
        else:
            yield item
    assert opened is not None
    stream, event = opened
    fault: str | None = None
    try:
        while True:
            for out in state.feed(event):
                yield out
            idle = asyncio.timeout(watch.patience.idle)
            try:
                async with idle:
                    event = await anext(stream)
            except StopAsyncIteration:
                break
            except TimeoutError:
                if not idle.expired():
                    raise
                raise watch.stalled() from None
            except faults.mid_stream as exc:
                fault = faults.describe(exc)
                break
    finally:
        await stream.close()
    fault = fault or state.incomplete()
    if fault is None:
        for out in state.finish():
            yield out
        return
    yield StreamReset(fault)
    completed: Completed | None = None
    async for item in with_retries(policy, fallback, classify, watch, whole=True):
        if isinstance(item, Opened):
            completed = item.value
        else:
            yield item
    assert completed is not None
    for out in replay(completed):
        yield out
