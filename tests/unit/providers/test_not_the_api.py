"""A redirect, or a page where the event stream should be (a captive portal, a proxy's login),
is named for what it is, with the URL, the status and the content type, and is not retried as
if the network had failed. Redirects that keep the request (307, 308) are followed, as the
SDKs' own clients follow them."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from providers_support import collect, make_request

from tether.core.messages import TextBlock
from tether.errors import ModelError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Completed
from tether.providers.models import ModelOptions
from tether.providers.openai_compat import OpenAICompatProvider
from tether.providers.retry import NotTheApiError, check_answer
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer

PAGE = b"<html><head><title>Hotel Wi-Fi</title></head><body>Please log in</body></html>"
WINDOW = ModelOptions(context_window=8_192)
"""A window setting: no discovery, so only the chat request reaches the server."""


class Front:
    """Answers every request as ``mode`` says: ``301``/``302``/``303`` to /login (which is
    the login page), ``html-200``, ``html-407`` (a proxy asking for credentials),
    ``loop-307`` (307 to the same URL), ``moved-307``/``moved-308`` (the API moved from
    /old/... to /..., forwarded to ``upstream``)."""

    def __init__(self, mode: str, upstream: int | None = None) -> None:
        self.mode = mode
        self.paths: list[str] = []
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer(body)

            def do_GET(self) -> None:
                self._answer(b"")

            def _send(self, status: int, kind: str | None, data: bytes, **extra: str) -> None:
                self.send_response(status)
                if kind:
                    self.send_header("Content-Type", kind)
                for name, value in extra.items():
                    self.send_header(name.replace("_", "-"), value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, body: bytes) -> None:
                front.paths.append(self.path)
                if self.path == "/login" or mode == "html-200":
                    return self._send(200, "text/html; charset=utf-8", PAGE)
                if mode == "html-407":
                    return self._send(407, "text/html", PAGE, Proxy_Authenticate="Basic")
                if mode == "loop-307":
                    return self._send(307, None, b"", Location=self.path)
                if mode.startswith("moved-") and self.path.startswith("/old/"):
                    return self._send(int(mode[-3:]), None, b"", Location=self.path[4:])
                if mode.startswith("moved-"):
                    assert upstream is not None
                    ask = http.client.HTTPConnection("127.0.0.1", upstream, timeout=10)
                    skip = ("host", "content-length", "accept-encoding")
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                    ask.request(self.command, self.path, body=body, headers=headers)
                    answer = ask.getresponse()
                    return self._send(
                        answer.status, answer.getheader("content-type"), answer.read()
                    )
                return self._send(int(mode), "text/html", PAGE, Location="/login")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(params=["301", "302", "303", "html-200"])
def portal(request: pytest.FixtureRequest) -> Iterator[Front]:
    server = Front(request.param)
    yield server
    server.close()


async def _anthropic_error(base: str) -> str:
    provider = AnthropicProvider("claude-sonnet-4-6", base_url=base, api_key="k")
    try:
        with pytest.raises(ModelError) as raised:
            await collect(provider.stream(make_request()))
    finally:
        await provider.aclose()
    return str(raised.value)


async def _openai_error(base: str) -> str:
    provider = OpenAICompatProvider("qwen", base_url=base, options=WINDOW, api_key="k")
    try:
        with pytest.raises(ModelError) as raised:
            await collect(provider.stream(make_request(model="qwen")))
    finally:
        await provider.aclose()
    return str(raised.value)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_a_portal_is_named_and_not_retried(portal: Front, api: str) -> None:
    """Nothing follows a 301/302/303 to a POST (it would turn into a GET of a login page,
    maybe on a host that does not resolve): it is named where it answered."""
    base = portal.url if api == "anthropic" else f"{portal.url}/v1"
    path = "/v1/messages" if api == "anthropic" else "/v1/chat/completions"
    message = await (_anthropic_error if api == "anthropic" else _openai_error)(base)
    assert f"{portal.url}{path} answered HTTP" in message
    if portal.mode == "html-200":
        assert "HTTP 200 with text/html" in message and "not text/event-stream" in message
    else:
        assert f"HTTP {portal.mode} to /login: it is not the model API" in message
    assert "captive portal" in message
    assert portal.paths == [path]  # asked once, never retried, never followed


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_a_redirect_loop_is_named_and_not_retried(api: str) -> None:
    front = Front("loop-307")
    try:
        base = front.url if api == "anthropic" else f"{front.url}/v1"
        message = await (_anthropic_error if api == "anthropic" else _openai_error)(base)
    finally:
        front.close()
    assert "redirects in a loop" in message and front.url in message
    assert len(front.paths) == 21  # one request and httpx's 20 redirects: no retry


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_a_proxy_page_asking_for_credentials_names_url_status_and_type(api: str) -> None:
    front = Front("html-407")
    try:
        base = front.url if api == "anthropic" else f"{front.url}/v1"
        message = await (_anthropic_error if api == "anthropic" else _openai_error)(base)
    finally:
        front.close()
    assert f"{front.url}/v1/" in message and "answered HTTP 407 with text/html" in message
    assert "'Hotel Wi-Fi'" in message and "HTTPS_PROXY=http://user:password@host:port" in message
    assert len(front.paths) == 1


@pytest.mark.parametrize("status", ["307", "308"])
async def test_an_api_that_moved_with_307_or_308_is_followed(status: str) -> None:
    """As the SDKs' own clients do; the key goes along on the same host."""
    reply = [[{"type": "text", "text": "moved"}]]
    with FakeAnthropicServer(reply) as anthropic_api, FakeOpenAIServer(reply) as openai_api:
        fronts = [Front(f"moved-{status}", anthropic_api.port), Front(f"moved-{status}", openai_api.port)]  # fmt: skip
        try:
            anthropic = AnthropicProvider(
                "claude-sonnet-4-6", base_url=f"{fronts[0].url}/old", api_key="k"
            )
            openai = OpenAICompatProvider(
                "qwen", base_url=f"{fronts[1].url}/old/v1", options=WINDOW, api_key="k"
            )
            for provider, model in ((anthropic, "claude-sonnet-4-6"), (openai, "qwen")):
                try:
                    events = await collect(provider.stream(make_request(model=model)))
                finally:
                    await provider.aclose()
                done = [e for e in events if isinstance(e, Completed)]
                assert done and done[0].message.content == [TextBlock(text="moved")]
        finally:
            for front in fronts:
                front.close()
    assert fronts[0].paths == ["/old/v1/messages", "/v1/messages"]
    assert fronts[1].paths == ["/old/v1/chat/completions", "/v1/chat/completions"]


def test_content_types_are_compared_without_case_or_parameters() -> None:
    url = "http://127.0.0.1:1/v1/messages"
    for kind in ("text/event-stream", "Text/Event-Stream", "text/event-stream; charset=utf-8"):
        check_answer(url, 200, {"content-type": kind}, expect="text/event-stream")
    with pytest.raises(NotTheApiError):
        check_answer(url, 200, {"content-type": "text/event-streamx"}, expect="text/event-stream")
