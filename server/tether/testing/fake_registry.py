"""A package registry on loopback for the sandbox's network tests: a PyPI simple index with
one wheel, an npm packument, a plain page, and a large body (``/bytes/N``). It records the
``Host`` and path of every request it gets (``log``): a refused host must never appear.

Real clients accept what it serves: ``pip download tinypkg`` (the wheel is a real one,
built here: name and version in its metadata agree with its file name) and ``npm view
tinypkg version``. Names are given to it through the proxy's resolver
(``TETHER_PROXY_RESOLVE=registry.test=127.0.0.1``), so the sandbox reaches it by name.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

PACKAGE = "tinypkg"
VERSION = "1.0"
WHEEL = f"{PACKAGE}-{VERSION}-py3-none-any.whl"


def _wheel() -> bytes:
    info = f"{PACKAGE}-{VERSION}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {VERSION}\n"
    wheel = "Wheel-Version: 1.0\nGenerator: tether\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = {
        f"{PACKAGE}/__init__.py": b"VALUE = 1\n",
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": wheel.encode(),
    }
    record: list[str] = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out.getvalue()


class FakeRegistry:
    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        """``(Host header, path)`` of every request, in order."""
        self._lock = threading.Lock()
        self.wheel = _wheel()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def hosts(self) -> list[str]:
        with self._lock:
            return [host for host, _path in self.log]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def respond(self, h: BaseHTTPRequestHandler) -> None:
        host = h.headers.get("Host", "")
        path = h.path.split("?")[0]
        with self._lock:
            self.log.append((host, path))
        base = f"http://{host}"
        if path in (f"/simple/{PACKAGE}/", f"/simple/{PACKAGE}"):
            sha = hashlib.sha256(self.wheel).hexdigest()
            link = f'<a href="{base}/files/{WHEEL}#sha256={sha}">{WHEEL}</a>'
            page = f"<!DOCTYPE html><html><body>{link}</body></html>".encode()
            return _send(h, 200, page, "text/html")
        if path == f"/files/{WHEEL}":
            return _send(h, 200, self.wheel, "application/octet-stream")
        if path == f"/{PACKAGE}":
            version = {"name": PACKAGE, "version": "1.0.0"}
            doc: dict[str, Any] = {
                "name": PACKAGE,
                "dist-tags": {"latest": "1.0.0"},
                "versions": {
                    "1.0.0": {
                        **version,
                        "dist": {"tarball": f"{base}/{PACKAGE}-1.0.0.tgz", "shasum": "0" * 40},
                    }
                },
            }
            return _send(h, 200, json.dumps(doc).encode(), "application/json")
        if path.startswith("/bytes/") and path[7:].isdigit():
            return _send(h, 200, b"x" * int(path[7:]), "application/octet-stream")
        if path == "/hello":
            return _send(h, 200, b"hello from the registry\n", "text/plain")
        return _send(h, 404, b"not found\n", "text/plain")


def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
    h.send_response(status)
    h.send_header("Content-Type", kind)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _handler(registry: FakeRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            registry.respond(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
