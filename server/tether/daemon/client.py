"""Reaching the warm daemon from a client process, with the standard library only.

``connect`` finds the daemon on its socket, starts one if none answers (one starter at a
time, under a lock), and replaces a daemon of another build (an upgrade, an edited
checkout). ``Channel`` speaks JSON-RPC with LSP framing over the connection.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, cast

from tether.daemon.build import build_id
from tether.daemon.paths import (
    alive_lock_path,
    ensure_private,
    log_path,
    runtime_dir,
    socket_path,
)

START_TIMEOUT_S = 20.0


class DaemonUnavailable(ConnectionError):
    """No daemon could be reached or started; the message says why and what to do."""


class Channel:
    """One JSON-RPC connection: requests out, messages in (blocking)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

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
                length = _content_length(self._buffer[:header_end])
                start = header_end + 4
                if len(self._buffer) - start >= length:
                    body = self._buffer[start : start + length]
                    self._buffer = self._buffer[start + length :]
                    message: dict[str, Any] = json.loads(body)
                    return message
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self._buffer += chunk

    def result(self, method: str, params: Any = None) -> Any:
        """A request and its result (messages in between are dropped: for simple calls)."""
        msg_id = self.request(method, params)
        while True:
            message = self.receive()
            if message is None:
                raise DaemonUnavailable("the daemon closed the connection")
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"].get("message", "daemon error"))
                return message.get("result")

    def call_object(self, method: str, params: Any = None) -> dict[str, Any]:
        result = self.result(method, params)
        if not isinstance(result, dict):
            raise RuntimeError(f"{method} answered {result!r}, not an object")
        return cast(dict[str, Any], result)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def _content_length(header: bytes) -> int:
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    raise ValueError("a message without Content-Length")


def try_connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except PermissionError as e:
        sock.close()
        raise DaemonUnavailable(f"cannot use the daemon socket {path}: {e}") from e
    return sock


@contextlib.contextmanager
def _start_lock(directory: Path) -> Generator[None]:
    with open(directory / "daemon.lock", "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        yield


def connect(env: Mapping[str, str] | None = None, *, start: bool = True) -> Channel:
    """A channel to this user's daemon of this build, started if needed."""
    env = os.environ if env is None else env
    path = socket_path(env)
    sock = try_connect(path)
    if sock is not None:
        channel = Channel(sock)
        if _same_build(channel):
            return channel
        stop(channel, path)
    if not start:
        raise DaemonUnavailable("no Tether daemon is running")
    directory = ensure_private(runtime_dir(env))
    with _start_lock(directory):
        sock = try_connect(path)  # another client may have started it meanwhile
        if sock is None:
            sock = _start_and_wait(env, path)
    return Channel(sock)


def connect_running(env: Mapping[str, str] | None = None) -> Channel | None:
    """A channel to this user's daemon if one runs, else None. It is not asked which build
    it is (a round trip): the caller sends its build with its request, and stops a daemon
    of another build that refuses it (``stop``). For a caller that can do its work
    itself: starting a daemon costs more than one in-process run, so such a caller runs
    in-process and then calls ``start_in_background`` for the next one."""
    sock = try_connect(socket_path(os.environ if env is None else env))
    return Channel(sock) if sock is not None else None


def daemon_starting(env: Mapping[str, str] | None = None) -> bool:
    """Whether a daemon holds its life lock (it runs, or is starting and not listening)."""
    try:
        fd = os.open(alive_lock_path(env), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def claim_life_lock(env: Mapping[str, str] | None = None) -> int | None:
    """Take the daemon's life lock for a daemon about to be spawned (None: one runs or is
    starting). The daemon inherits it (``LOCK_FD_ENV``): from the moment it is spawned, a
    client or ``tether daemon stop`` sees it starting, however slowly it gets going."""
    try:
        fd = os.open(alive_lock_path(env), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def start_in_background(env: Mapping[str, str] | None = None) -> None:
    """Start this user's daemon unless one runs or is starting; do not wait for it."""
    env = os.environ if env is None else env
    directory = ensure_private(runtime_dir(env))
    with _start_lock(directory):
        sock = try_connect(socket_path(env))
        if sock is not None:
            sock.close()
            return
        lock = claim_life_lock(env)
        if lock is not None:
            _spawn(env, lock, after_pid=os.getpid())


def wait_for_starter(env: MutableMapping[str, str], timeout: float = 5.0) -> None:
    """In a daemon a call started as it left: wait (bounded) until that process is gone."""
    raw = env.pop(AFTER_ENV, "")
    if not raw.isdigit():
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(int(raw), 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


def wait_for_socket(path: Path, timeout: float = START_TIMEOUT_S) -> socket.socket | None:
    """A connection to a daemon that is starting, once it listens (None: it never did)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock = try_connect(path)
        if sock is not None:
            return sock
        time.sleep(0.02)
    return None


def _same_build(channel: Channel) -> bool:
    try:
        info = channel.call_object("tether/daemonInfo")
    except (DaemonUnavailable, RuntimeError, OSError):
        return False
    return info.get("build") == build_id()


def stop(channel: Channel, path: Path, timeout: float = 10.0) -> None:
    """Ask a daemon to stop and wait until its socket is gone."""
    with contextlib.suppress(DaemonUnavailable, RuntimeError, OSError):
        channel.result("tether/daemonStop")
    channel.close()
    deadline = time.monotonic() + timeout
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


AFTER_ENV = "TETHER_DAEMON_AFTER"
"""A daemon started by a call that ran in-process waits for that process to leave before it
imports anything heavy: the call's last moments are the user's, not the daemon's."""


LOCK_FD_ENV = "TETHER_DAEMON_LOCK_FD"
"""The descriptor of the life lock a spawned daemon inherits from its spawner."""


def _spawn(env: Mapping[str, str], lock: int, after_pid: int | None = None) -> None:
    """Start ``tether daemon run`` with the life lock ``lock`` (``claim_life_lock``),
    which it keeps; this process's copy is closed."""
    log = log_path(env)
    env = dict(env)
    env.pop(AFTER_ENV, None)
    if after_pid is not None:
        env[AFTER_ENV] = str(after_pid)
    env[LOCK_FD_ENV] = str(lock)
    try:
        with open(log, "ab") as out:
            os.chmod(log, 0o600)
            subprocess.Popen(
                [sys.executable, "-m", "tether", "daemon", "run"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                env=env,
                cwd="/",
                start_new_session=True,
                pass_fds=(lock,),
            )
    finally:
        os.close(lock)


def _start_and_wait(env: Mapping[str, str], path: Path) -> socket.socket:
    """Start a daemon unless one is starting (its life lock is taken), and wait for its
    socket; a daemon that is still leaving (a replaced build) is waited out first."""
    spawned = False
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        sock = try_connect(path)
        if sock is not None:
            return sock
        if not spawned:
            lock = claim_life_lock(env)
            if lock is not None:
                _spawn(env, lock)
                spawned = True
        time.sleep(0.02)
    raise DaemonUnavailable(
        f"the Tether daemon did not start within {START_TIMEOUT_S:.0f} s; its log is "
        f"{log_path()} (run `tether daemon run` to see it in the foreground, or use "
        "--no-daemon)"
    )
