"""One JSON-RPC connection to the warm daemon (LSP framing over its Unix socket), with the
standard library only, and the errors a client can meet there.

Whatever listens on the socket is checked before it is trusted with anything: it must be a
process of this user (``SO_PEERCRED``), it must answer a request within
``ANSWER_TIMEOUT_S`` (a stopped or hung daemon does not), and it must speak the protocol
(a stray server does not). Each failure is a ``DaemonUnavailable`` naming what was found,
never a Python error from the middle of the framing: the command line falls back to
running in this process, or says what to do.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
from pathlib import Path
from typing import Any, cast

ANSWER_TIMEOUT_S = 10.0
"""How long a request that should be answered at once may take (``tether/daemonInfo``,
``tether/daemonStop``); a daemon that takes longer is stopped or hung. Generous: a daemon
importing its modules on a loaded machine can keep a request waiting for seconds."""
ANSWER_ENV = "TETHER_DAEMON_ANSWER_S"


def answer_timeout() -> float:
    """How long a call waits for the daemon's answer: ``$TETHER_DAEMON_ANSWER_S`` (seconds,
    for a machine too loaded for the default) or ``ANSWER_TIMEOUT_S``."""
    raw = os.environ.get(ANSWER_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return ANSWER_TIMEOUT_S
    return value if 0 < value < 3600 else ANSWER_TIMEOUT_S


class DaemonUnavailable(ConnectionError):
    """No daemon could be reached, used or started; the message says why and what to do."""


class DaemonNotAnswering(DaemonUnavailable):
    """Something accepts connections on the socket but does not answer (a daemon that is
    stopped or hung)."""


class NotADaemon(DaemonUnavailable):
    """Something on the socket answers, but not as a Tether daemon does."""


class DaemonRefused(RuntimeError):
    """The daemon answered a request with an error (the message is its)."""


def peer(sock: socket.socket) -> tuple[int, int] | None:
    """The pid and uid of the process at the other end, where the system tells (Linux)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid


def try_connect(path: Path) -> socket.socket | None:
    """A connection to what listens on ``path``; None when nothing does. A listener of
    another user is refused: the daemon is told the caller's environment and keys."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except PermissionError as e:
        sock.close()
        raise DaemonUnavailable(f"cannot use the daemon socket {path}: {e.strerror}") from e
    except OSError as e:
        sock.close()
        raise DaemonUnavailable(f"cannot connect to the daemon socket {path}: {e}") from e
    found = peer(sock)
    if found is not None and found[1] != os.getuid():
        sock.close()
        raise DaemonUnavailable(
            f"{path} is served by a process of another user (pid {found[0]}, uid {found[1]}); "
            "set TETHER_RUNTIME_DIR to a directory of your own"
        )
    return sock


class Channel:
    """One JSON-RPC connection: requests out, messages in (blocking)."""

    def __init__(self, sock: socket.socket, path: Path | None = None) -> None:
        self.sock = sock
        self.path = path
        """The socket's path, for messages."""
        self._buffer = b""
        self._next_id = 0

    @property
    def where(self) -> str:
        return str(self.path) if self.path is not None else "the daemon socket"

    def peer_pid(self) -> int | None:
        found = peer(self.sock)
        return found[0] if found is not None else None

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        try:
            self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except TimeoutError as e:
            raise self._not_answering() from e
        except OSError as e:
            raise DaemonUnavailable(f"the connection to {self.where} broke ({e})") from e

    def request(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self._next_id

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def receive(self) -> dict[str, Any] | None:
        """The next message, or None when the daemon closed the connection."""
        while True:
            header_end = self._buffer.find(b"\r\n\r\n")
            if header_end >= 0:
                length = self._content_length(self._buffer[:header_end])
                start = header_end + 4
                if len(self._buffer) - start >= length:
                    body = self._buffer[start : start + length]
                    self._buffer = self._buffer[start + length :]
                    return self._decode(body)
            elif len(self._buffer) > 65536:
                raise self._foreign("no message header in its first 64 KiB")
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError as e:
                raise self._not_answering() from e
            except OSError as e:
                raise DaemonUnavailable(f"the connection to {self.where} broke ({e})") from e
            if not chunk:
                return None
            self._buffer += chunk

    def result(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """A request and its result within ``timeout`` (messages in between are dropped:
        for simple calls). A daemon answers these at once: a connection closed unanswered
        is ``NotADaemon``."""
        self.sock.settimeout(answer_timeout() if timeout is None else timeout)
        try:
            try:
                msg_id = self.request(method, params)
                message = self.receive()
                while message is not None and not (
                    message.get("id") == msg_id and "method" not in message
                ):
                    message = self.receive()
            except (DaemonNotAnswering, NotADaemon):
                raise
            except DaemonUnavailable as e:
                raise self._foreign(f"it closed the connection unanswered ({e.__cause__})") from e
            if message is None:
                raise self._foreign("it closed the connection unanswered")
            if "error" in message:
                error: Any = message["error"]
                fields = cast(dict[str, Any], error) if isinstance(error, dict) else {}
                raise DaemonRefused(str(fields.get("message") or "daemon error"))
            return message.get("result")
        finally:
            with contextlib.suppress(OSError):
                self.sock.settimeout(None)

    def call_object(
        self, method: str, params: Any = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        result = self.result(method, params, timeout=timeout)
        if not isinstance(result, dict):
            raise self._foreign(f"{method} answered {result!r}, not an object")
        return cast(dict[str, Any], result)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    # -- what went wrong ------------------------------------------------------------------

    def _content_length(self, header: bytes) -> int:
        for line in header.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                if value.strip().isdigit():  # ASCII digits only: int() also takes "7_5"
                    return int(value.strip())
                break
        raise self._foreign(f"it sent {header[:60]!r}, not a JSON-RPC message")

    def _decode(self, body: bytes) -> dict[str, Any]:
        try:
            message: Any = json.loads(body)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise self._foreign(f"it sent {body[:60]!r}, not a JSON-RPC message")
        return cast(dict[str, Any], message)

    def _who(self) -> str:
        pid = self.peer_pid()
        return f"{self.where} (pid {pid})" if pid is not None else self.where

    def _not_answering(self) -> DaemonNotAnswering:
        return DaemonNotAnswering(
            f"what listens on {self._who()} does not answer (stopped or hung); "
            "`tether daemon stop` ends it"
        )

    def _foreign(self, what: str) -> NotADaemon:
        return NotADaemon(
            f"what listens on {self._who()} is not a Tether daemon: {what}; stop that "
            "program, or set TETHER_RUNTIME_DIR to another directory"
        )
