"""Fetch one URL under WebFetch's rules.

- Only ``http``/``https`` URLs without credentials. ``http`` is upgraded to ``https``,
  except for loopback hosts (a local dev server has no TLS, and no network sits between).
- Redirects are followed only within the same host (``www.`` aside); a redirect elsewhere is
  returned as ``CrossHostRedirect`` so the model asks again for the new URL, and that call
  gets its own permission check.
- The body is capped (``max_bytes``, checked while streaming) and the whole exchange is
  bounded by ``timeout_s``.
- HTML becomes Markdown; other text types stay as they are; anything else is refused.

Failures are ``FetchError`` with a message the model can act on.
"""

from __future__ import annotations

import asyncio
import ipaddress

import httpx2

from tether import __version__
from tether.providers.network import NetworkSettings
from tether.web.markdown import html_to_markdown
from tether.web.page import CrossHostRedirect, FetchError, Page

MAX_REDIRECTS = 10
MAX_URL_CHARS = 2000
USER_AGENT = f"Mozilla/5.0 (compatible; Tether/{__version__}; WebFetch)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript")
_TEXT_SUFFIXES = ("+json", "+xml")


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normalize_url(raw: str) -> httpx2.URL:
    """The URL that will be fetched; raises FetchError for one WebFetch does not take."""
    if len(raw) > MAX_URL_CHARS:
        raise FetchError(f"The URL is longer than {MAX_URL_CHARS} characters.")
    try:
        url = httpx2.URL(raw.strip())
    except (httpx2.InvalidURL, ValueError) as e:
        raise FetchError(f"Not a valid URL: {raw!r} ({e}).")
    if url.scheme not in ("http", "https") or not url.host:
        raise FetchError(f"Only http and https URLs can be fetched, not {raw!r}.")
    if url.userinfo:
        raise FetchError("URLs with a user name or password are not fetched.")
    if url.scheme == "http" and not is_loopback(url.host):
        url = url.copy_with(scheme="https")
    return url


def same_host(a: httpx2.URL, b: httpx2.URL) -> bool:
    return a.host.removeprefix("www.") == b.host.removeprefix("www.")


async def fetch(
    raw_url: str,
    *,
    timeout_s: float,
    max_bytes: int,
    transport: httpx2.AsyncBaseTransport | None = None,
    network: NetworkSettings | None = None,
) -> Page | CrossHostRedirect:
    """``network``: the proxies and CA certificates of the warm daemon's client the session
    belongs to (None: this process's environment)."""
    url = normalize_url(raw_url)
    try:
        async with asyncio.timeout(timeout_s):
            return await _fetch(url, timeout_s, max_bytes, network)
    except TimeoutError:
        raise FetchError(f"{url.host} did not answer within {timeout_s:g} seconds.") from None
    except httpx2.TimeoutException:
        raise FetchError(f"{url.host} did not answer within {timeout_s:g} seconds.") from None
    except httpx2.ConnectError as e:
        raise FetchError(
            f"Could not connect to {url.host} ({e}). The machine may be offline, or the host "
            "unreachable or blocked."
        ) from None
    except httpx2.HTTPError as e:
        raise FetchError(f"Fetching {url} failed: {type(e).__name__}: {e}.") from None


async def _fetch(
    url: httpx2.URL, timeout_s: float, max_bytes: int, network: NetworkSettings | None
) -> Page | CrossHostRedirect:
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
    }
    make = network.client if network is not None else httpx2.AsyncClient
    async with make(timeout=timeout_s, follow_redirects=False, headers=headers) as client:
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", url) as response:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    target = normalize_url(str(url.join(response.headers["location"])))
                    if not same_host(url, target):
                        return CrossHostRedirect(str(url), str(target), response.status_code)
                    url = target
                    continue
                return await _page(url, response, max_bytes)
    raise FetchError(f"{url} redirected more than {MAX_REDIRECTS} times.")


async def _page(url: httpx2.URL, response: httpx2.Response, max_bytes: int) -> Page:
    status = response.status_code
    if status >= 400:
        raise FetchError(
            f"{url} answered HTTP {status} {response.reason_phrase}"
            + (
                " (access refused: the site may block automated fetches)"
                if status in (401, 403)
                else ""
            )
            + "."
        )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"The page is {declared} bytes, more than the {max_bytes} WebFetch takes.")
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and not _is_text(content_type):
        raise FetchError(
            f"{url} is {content_type}, not a text page; WebFetch reads HTML and other text only."
        )
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise FetchError(f"The page is larger than the {max_bytes} bytes WebFetch takes.")
    text = bytes(body).decode(response.charset_encoding or "utf-8", errors="replace")
    if content_type in ("text/html", "application/xhtml+xml") or (
        not content_type and "<html" in text[:1000].lower()
    ):
        text = await asyncio.to_thread(html_to_markdown, text)
    return Page(str(url), status, content_type or "text/plain", text, len(body))


def _is_text(content_type: str) -> bool:
    return (
        content_type.startswith(_TEXT_TYPES)
        or content_type.endswith(_TEXT_SUFFIXES)
        or (content_type == "application/xhtml+xml")
    )
