"""A forward HTTP proxy for tests: records each request it relays, then relays it.

Strict as a real proxy is: a request must name its target in absolute form
(``POST http://host:port/path``), as clients send to a proxy, else 400; a target it cannot
reach is a 502. It relays plain ``http://`` whole once the upstream has finished, and
tunnels ``CONNECT``; given credentials, it answers 407 to a request without them.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self
from urllib.parse import quote, urlsplit

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
    def __init__(self, credentials: str | None = None) -> None:
        self.credentials = credentials
        """``user:password`` a request must send as ``Proxy-Authorization: Basic`` (else
        407 with ``Proxy-Authenticate``, as Squid answers), or None: no authentication."""
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
        """With the credentials, percent-encoded, when it has them."""
        user = f"{quote(self.credentials, safe=':')}@" if self.credentials else ""
        return f"http://{user}127.0.0.1:{self._httpd.server_address[1]}"

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

        def _authorized(self) -> bool:
            if proxy.credentials is None:
                return True
            want = "Basic " + base64.b64encode(proxy.credentials.encode()).decode("ascii")
            if self.headers.get("Proxy-Authorization") == want:
                return True
            proxy.fail(f"no proxy credentials: {self.command} {self.path}")
            self.send_response(407)
            self.send_header("Proxy-Authenticate", 'Basic realm="fake"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False

        def do_CONNECT(self) -> None:
            if not self._authorized():
                return
            host, _, port = self.path.rpartition(":")
            try:
                upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=60)
            except (OSError, ValueError) as e:
                self._answer(502, f"upstream unreachable: {e}".encode())
                return
            proxy.record(f"CONNECT {self.path}")
            self.send_response(200)
            self.end_headers()
            self.wfile.flush()
            both = [self.connection, upstream]

            def pipe(src: socket.socket, dst: socket.socket) -> None:
                with contextlib.suppress(OSError):
                    while data := src.recv(65536):
                        dst.sendall(data)
                    dst.shutdown(socket.SHUT_WR)

            back = threading.Thread(target=pipe, args=(upstream, both[0]), daemon=True)
            back.start()
            pipe(both[0], upstream)
            back.join(60)
            upstream.close()
            self.close_connection = True

        def _relay(self) -> None:
            if not self._authorized():
                return
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
