"""A model server that takes the connection and then keeps the client waiting: it reads the
request and answers nothing (a hung server, a model that never finishes loading), or only the
headers of an event stream (a server that stalls before its first event). For the waits of
``providers/patience``; stopping it hangs up on every client."""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Literal, Self

STREAM_HEADERS = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)


class SilentServer:
    """``answer``: ``"nothing"``, or ``"headers"`` of an event stream and nothing after."""

    def __init__(self, answer: Literal["nothing", "headers"] = "nothing") -> None:
        self._answer = answer
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._clients: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="silent-server", daemon=True)
        self.requests = 0
        """Requests taken (each on a connection of its own: none is ever answered)."""

        host, port = self._listener.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        self.base_url = self.url
        """As the fake servers name it."""

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept loop, which ends
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            for client in self._clients:
                client.close()
        self._thread.join(timeout=5)

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

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._clients.append(client)
            threading.Thread(target=self._hold, args=(client,), daemon=True).start()

    def _hold(self, client: socket.socket) -> None:
        """Read the request head, answer as told, then read on until the client hangs up."""
        seen = b""
        try:
            while b"\r\n\r\n" not in seen:
                chunk = client.recv(65536)
                if not chunk:
                    return
                seen += chunk
            with self._lock:
                self.requests += 1
            if self._answer == "headers":
                client.sendall(STREAM_HEADERS)
            while client.recv(65536):
                pass
        except OSError:
            return
