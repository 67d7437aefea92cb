"""A redirect, or a page where the event stream should be (a captive portal, a proxy's login),
is named for what it is, with the URL, the status and the content type, and is not retried as
if the network had failed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from providers_support import collect, make_request

from tether.errors import ModelError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.models import ModelOptions
from tether.providers.openai_compat import OpenAICompatProvider

PAGE = b"<html><body>Please log in to the hotel Wi-Fi</body></html>"


class Portal:
    """Answers every POST with a redirect to /login (``redirect``) or the login page."""

    def __init__(self, redirect: bool) -> None:
        self.redirect = redirect
        self.paths: list[str] = []
        portal = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer()

            def do_GET(self) -> None:
                self._answer()

            def _answer(self) -> None:
                portal.paths.append(self.path)
                if portal.redirect and self.path != "/login":
                    self.send_response(301)
                    self.send_header("Location", f"http://127.0.0.1:{portal.port}/login")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(params=[True, False], ids=["301", "html-200"])
def portal(request: pytest.FixtureRequest) -> Iterator[Portal]:
    server = Portal(redirect=request.param)
    yield server
    server.close()


async def test_anthropic_names_the_page_and_does_not_retry(portal: Portal) -> None:
    base = f"http://127.0.0.1:{portal.port}"
    provider = AnthropicProvider("claude-sonnet-4-6", base_url=base, api_key="k")
    with pytest.raises(ModelError) as raised:
        await collect(provider.stream(make_request()))
    await provider.aclose()
    message = str(raised.value)
    assert f"{base}/v1/messages answered HTTP" in message
    if portal.redirect:
        assert "HTTP 301" in message and f"to {base}/login" in message
    else:
        assert "HTTP 200 with text/html" in message
    assert "not text/event-stream" in message and "captive portal" in message
    assert portal.paths == ["/v1/messages"]  # asked once, never retried


async def test_openai_names_the_page_and_does_not_retry(portal: Portal) -> None:
    base = f"http://127.0.0.1:{portal.port}/v1"
    # A window setting: no discovery, so only the chat request reaches the portal.
    options = ModelOptions(context_window=8_192)
    provider = OpenAICompatProvider("qwen", base_url=base, options=options, api_key="k")
    with pytest.raises(ModelError) as raised:
        await collect(provider.stream(make_request(model="qwen")))
    await provider.aclose()
    message = str(raised.value)
    assert "HTTP 200 with text/html" in message and "not text/event-stream" in message
    if portal.redirect:  # the SDK follows redirects: both ends are named
        assert (
            f"http://127.0.0.1:{portal.port}/login (redirected from {base}/chat/completions)"
            in (message)
        )
        assert portal.paths == ["/v1/chat/completions", "/login"]
    else:
        assert f"{base}/chat/completions answered" in message
        assert portal.paths == ["/v1/chat/completions"]
