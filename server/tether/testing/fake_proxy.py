"""A forward HTTP proxy for tests: records each request it relays, then relays it.

Strict as a real proxy is: a request must name its target in absolute form
(``POST http://host:port/path``), as clients send to a proxy, else 400; a target it cannot
reach is a 502. It relays plain ``http://`` only (no ``CONNECT``), which is what the fake
model servers speak. The response is relayed whole once the upstream has finished.
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)


class FakeProxy:
    def __init__(self) -> None:
        self.requests: list[str] = []
        """``METHOD absolute-url`` of every request relayed, in order."""
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="fake-proxy", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> str:
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def record(self, line: str) -> None:
        with self._lock:
            self.requests.append(line)

    def fail(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)


def _handler(proxy: FakeProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _relay(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            target = urlsplit(self.path)
            if target.scheme != "http" or not target.hostname:
                proxy.fail(f"not an absolute http:// target: {self.command} {self.path}")
                self._answer(400, b"a proxy request names its target in absolute form")
                return
            proxy.record(f"{self.command} {self.path}")
            path = target.path + (f"?{target.query}" if target.query else "")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=60)
            try:
                upstream.request(self.command, path or "/", body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
            except OSError as e:
                proxy.fail(f"{self.path}: {e}")
                self._answer(502, f"upstream unreachable: {e}".encode())
                return
            finally:
                upstream.close()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _answer(self, status: int, text: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        do_GET = do_POST = _relay

    return Handler
