"""A local web server for WebFetch tests: given HTML pages, same-host and cross-host
redirects, an oversize body (with and without Content-Length), a page that answers too
late, a refusal, a binary file, a missing page. Loopback only.

    with FakeWebServer({"/docs.html": html}) as web:
        web.url("/docs.html")                  # http://127.0.0.1:PORT/docs.html
        web.url("/elsewhere")                  # redirects to http://localhost:PORT/docs.html
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class FakeWebServer:
    """Serves on 127.0.0.1; ``localhost`` reaches it as a different host name."""

    def __init__(
        self, pages: Mapping[str, bytes], *, big_bytes: int = 200_000, slow_s: float = 5.0
    ) -> None:
        self.pages = dict(pages)
        """HTML pages by path."""
        self.big_bytes = big_bytes
        self.slow_s = slow_s
        self.hits: list[str] = []
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def respond(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?")[0]
        self.hits.append(path)
        if path in self.pages:
            return _send(handler, 200, self.pages[path], "text/html; charset=utf-8")
        if path == "/notes.txt":
            return _send(handler, 200, b"plain notes: keep it simple\n", "text/plain")
        if path == "/moved":
            return _redirect(handler, 301, next(iter(self.pages), "/"))
        if path == "/elsewhere":
            return _redirect(handler, 302, self.url(next(iter(self.pages), "/"), host="localhost"))
        if path == "/big":
            return _send(handler, 200, b"x" * self.big_bytes, "text/plain")
        if path == "/big-chunked":
            return _chunked(handler, self.big_bytes)
        if path == "/slow":
            self._stopping.wait(self.slow_s)
            return _send(handler, 200, b"too late", "text/plain")
        if path == "/picture.png":
            return _send(handler, 200, b"\x89PNG\r\n\x1a\n", "image/png")
        if path == "/private":
            return _send(handler, 403, b"go away", "text/plain")
        return _send(handler, 404, b"not here", "text/plain")


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _redirect(handler: BaseHTTPRequestHandler, status: int, location: str) -> None:
    handler.send_response(status)
    handler.send_header("Location", location)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _chunked(handler: BaseHTTPRequestHandler, total: int) -> None:
    """A body with no Content-Length: only counting while reading can stop it."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b"y" * 8192
    try:
        for _ in range(total // len(chunk) + 1):
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client stopped reading at its cap


def _handler(server: FakeWebServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            server.respond(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
