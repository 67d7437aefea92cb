"""``tether -p`` / ``tether run`` as a client of the warm daemon.

Standard library only (with ``tether.daemon.client``): this process pays Python's start-up
and nothing of Tether's. When no daemon runs, the call runs in-process (a cold daemon would
take longer than that) and starts one as it leaves; the next call finds it warm.

It sends the command line, its directory, its whole environment and umask (what the
run's processes get: ``core.environ.Caller``) and which of its streams are terminals
(``tether/print``); writes what the daemon sends for stdout and
stderr; reads its stdin only when the run reads it (``tether/readInput``); turns Ctrl+C
into ``tether/interrupt`` (a second Ctrl+C leaves at once); and exits with the run's exit
code. If the daemon goes away mid-run, it says so in
one line naming the session to resume, and exits 1.

The daemon must answer ``tether/daemonInfo`` first, at once: one that is stopped, hung, of
another user or not a Tether daemon at all is named in a ``[tether]`` line (on a terminal,
or with ``--verbose``) and the call runs in this process. A daemon of another build (an
upgrade) is replaced only when nobody else uses it; while it runs others' turns, the call
runs in this process (``client.replace``).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tether.core.environ import current_umask
from tether.daemon.build import build_id
from tether.daemon.channel import Channel, DaemonUnavailable
from tether.daemon.client import busy_message, connect_running, daemon_info, replace
from tether.daemon.paths import socket_path, warm_path

INTERRUPTED = 130
METHOD_NOT_FOUND = -32601


class Sender:
    """The channel's sending side, shared by the main thread and the stdin reader."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._lock = threading.Lock()

    def notify(self, method: str, params: Any = None) -> None:
        with self._lock, contextlib.suppress(OSError):
            self._channel.notify(method, params)

    def request(self, method: str, params: Any) -> int:
        with self._lock:
            return self._channel.request(method, params)


class StdinPump:
    """Reads stdin when the daemon asks (one piece per ask) and sends it up."""

    def __init__(self, sender: Sender, fd: int) -> None:
        self._sender = sender
        self._fd = fd
        self._wanted = threading.Event()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._thread: threading.Thread | None = None

    def want(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="stdin", daemon=True)
            self._thread.start()
        self._wanted.set()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            try:
                data = os.read(self._fd, 65536)
            except OSError:
                data = b""
            text = self._decoder.decode(data, final=not data)
            self._sender.notify("tether/input", {"text": text, "eof": not data})
            if not data:
                return


class OtherBuild(Exception):
    """The daemon is of another build (an upgrade, an edited checkout): it refused."""


class Output:
    """Writes the run's stdout and stderr; a reader of stdout that went away gets nothing
    more (the run goes on and is saved)."""

    def __init__(self) -> None:
        self._closed = False

    def write(self, stream: str, text: str) -> None:
        target = sys.stderr if stream == "stderr" else sys.stdout
        if target is sys.stdout and self._closed:
            return
        try:
            target.write(text)
            target.flush()
        except BrokenPipeError:
            if target is sys.stdout:
                self._closed = True
                _quiet_stdout()


def _quiet_stdout() -> None:
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def call_params(argv: Sequence[str], env: Mapping[str, str]) -> dict[str, Any]:
    """The params of ``tether/print``."""
    return {
        "build": build_id(),
        "argv": list(argv),
        "cwd": os.getcwd(),
        "env": dict(env),
        "umask": current_umask(),
        "stdinIsTty": _isatty(0),
        "stdoutIsTty": _isatty(1),
        "stderrIsTty": _isatty(2),
    }


def daemon_gone(session_id: str | None) -> str:
    if session_id is None:
        return (
            "[tether] error: the daemon stopped before the session started (the connection "
            "closed); run the command again, or with --no-daemon"
        )
    return (
        "[tether] error: the daemon stopped during the turn (the connection closed); "
        f"continue with: tether -p --resume {session_id} ..."
    )


@dataclass(frozen=True)
class RunHere:
    """The call runs in this process; ``start_daemon``: then start one for the next call."""

    start_daemon: bool


def run_remote(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int | RunHere:
    """The run's exit code, or ``RunHere`` when no daemon of this build can take it."""
    env = os.environ if env is None else env
    sock = socket_path(env)
    if sock.exists() and not warm_path(sock).exists():
        # Still starting or warming up (or not ours): running here is quicker than waiting.
        _note(argv, f"the daemon at {sock} is not ready yet; running in this process")
        return RunHere(start_daemon=False)
    try:
        channel = connect_running(env)
    except OSError as e:  # DaemonUnavailable, or a runtime directory of another user
        _note(argv, f"{e}; running in this process")
        return RunHere(start_daemon=False)
    if channel is None:
        return RunHere(start_daemon=True)
    try:
        info = daemon_info(channel)
        if info.get("build") != build_id():
            return _other_build(channel, info, argv, env)
        return _follow(channel, argv, env)
    except NotStarted as e:
        _note(argv, f"{e.__cause__ or e}; running in this process")
        return RunHere(start_daemon=False)
    except DaemonUnavailable as e:  # before the call was sent: nothing ran there
        _note(argv, f"{e}; running in this process")
        return RunHere(start_daemon=False)
    except OtherBuild:  # an older daemon that does not say its build in daemonInfo
        return _other_build(channel, {}, argv, env)
    finally:
        channel.close()


def _other_build(
    channel: Channel, info: dict[str, Any], argv: Sequence[str], env: Mapping[str, str]
) -> RunHere:
    if replace(channel, info, socket_path(env)):
        return RunHere(start_daemon=True)
    _note(argv, f"{busy_message(info)}; running in this process")
    return RunHere(start_daemon=False)


class NotStarted(Exception):
    """The call could not be sent (``__cause__`` says why): nothing of it ran."""


def _note(argv: Sequence[str], text: str) -> None:
    """A ``[tether]`` line for a person: on a terminal, or with ``--verbose``."""
    if "--verbose" in argv or _isatty(2):
        print(f"[tether] {text}", file=sys.stderr)


def _follow(channel: Channel, argv: Sequence[str], env: Mapping[str, str]) -> int:
    sender = Sender(channel)
    try:
        call_id = sender.request("tether/print", call_params(argv, env))
    except DaemonUnavailable as e:
        raise NotStarted() from e
    call = Following(channel, sender, call_id)
    interrupted = False
    while True:
        try:
            code = call.step()
        except KeyboardInterrupt:  # wherever it lands: reading, writing, deciding
            if interrupted:
                return INTERRUPTED
            interrupted = True
            sender.notify("tether/interrupt")
            continue
        if code is not None:
            return code


class Following:
    """One ``tether/print`` call, message by message."""

    def __init__(self, channel: Channel, sender: Sender, call_id: int) -> None:
        self._channel = channel
        self._call_id = call_id
        self._pump = StdinPump(sender, 0)
        self._out = Output()
        self._session_id: str | None = None

    def step(self) -> int | None:
        """Handle the next message; the exit code once the call is over."""
        try:
            message = self._channel.receive()
        except OSError:
            message = None
        if message is None:
            print(daemon_gone(self._session_id), file=sys.stderr)
            return 1
        method = message.get("method")
        params: dict[str, Any] = message.get("params") or {}
        if method == "tether/output":
            self._out.write(str(params.get("stream")), str(params.get("text", "")))
        elif method == "tether/readInput":
            self._pump.want()
        elif method == "tether/printSession":
            self._session_id = str(params.get("sessionId"))
        elif method is None and message.get("id") == self._call_id:
            return _exit_code(message)
        return None


def _exit_code(response: dict[str, Any]) -> int:
    if "error" in response:
        error: dict[str, Any] = response["error"]
        data: Any = error.get("data")
        refused = isinstance(data, dict) and "daemonBuild" in data
        if refused or error.get("code") == METHOD_NOT_FOUND:  # older: no tether/print
            raise OtherBuild()
        reason = error.get("message", "the daemon refused the command")
        print(f"[tether] error: {reason}", file=sys.stderr)
        return 1
    result: dict[str, Any] = response.get("result") or {}
    code = result.get("exitCode", 1)
    return code if isinstance(code, int) else 1
