"""Reaching the warm daemon from a client process, with the standard library only.

``connect`` finds the daemon on its socket, starts one if none answers (one starter at a
time, under a lock), and replaces a daemon of another build (an upgrade, an edited
checkout) once nobody else uses it: a newer client never cancels another caller's turn.
``Channel`` (``channel.py``) speaks JSON-RPC with LSP framing over the connection.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, cast

from tether.daemon.build import build_id
from tether.daemon.channel import (
    Channel,
    DaemonNotAnswering,
    DaemonRefused,
    DaemonUnavailable,
    NotADaemon,
    try_connect,
)
from tether.daemon.paths import (
    alive_lock_path,
    check_private,
    ensure_private,
    log_path,
    runtime_dir,
    socket_path,
)

START_TIMEOUT_S = 20.0


@contextlib.contextmanager
def _start_lock(directory: Path) -> Generator[None]:
    with open(directory / "daemon.lock", "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        yield


class DaemonBusy(DaemonUnavailable):
    """A daemon of another build serves other callers: it is not stopped under them."""


def connect(
    env: Mapping[str, str] | None = None, *, start: bool = True, any_build: bool = False
) -> Channel:
    """A channel to this user's daemon of this build (``any_build``: whichever runs),
    started if needed. Raises ``DaemonUnavailable`` (``DaemonBusy`` when a daemon of
    another build still serves others)."""
    env = os.environ if env is None else env
    path = socket_path(env)
    channel = connect_running(env)
    if channel is not None:
        try:
            info = daemon_info(channel)
        except BaseException:
            channel.close()
            raise
        if any_build or info.get("build") == build_id():
            return channel
        if not replace(channel, info, path):
            raise DaemonBusy(busy_message(info))
    if not start:
        raise DaemonUnavailable("no Tether daemon is running")
    directory = ensure_private(runtime_dir(env))
    with _start_lock(directory):
        sock = try_connect(path)  # another client may have started it meanwhile
        if sock is None:
            sock = _start_and_wait(env, path)
    return Channel(sock, path)


def connect_running(env: Mapping[str, str] | None = None) -> Channel | None:
    """A channel to this user's daemon if one listens, else None; ask it ``daemon_info``
    before anything else (it may be stopped, or of another build). For a caller that can
    do its work itself: starting a daemon costs more than one in-process run, so such a
    caller runs in-process and then calls ``start_in_background`` for the next one.
    Raises ``DaemonUnavailable`` (``RuntimeDirError``: the runtime directory is another
    user's)."""
    env = os.environ if env is None else env
    check_private(runtime_dir(env))
    path = socket_path(env)
    sock = try_connect(path)
    return Channel(sock, path) if sock is not None else None


def daemon_info(channel: Channel) -> dict[str, Any]:
    """``tether/daemonInfo``, answered within ``ANSWER_TIMEOUT_S``: the daemon is alive
    and speaks the protocol (else ``DaemonNotAnswering`` or ``NotADaemon``)."""
    try:
        return channel.call_object("tether/daemonInfo")
    except DaemonRefused as e:
        raise NotADaemon(f"{channel.where} refused tether/daemonInfo ({e})") from e


def in_use(info: Mapping[str, Any]) -> int:
    """How many other callers a daemon serves: its clients besides the one asking, and its
    sessions at work (a running turn, or a background task: a shell command, a subagent,
    whose editor may have gone and come back for it)."""
    clients = info.get("clients")
    others = clients - 1 if isinstance(clients, int) else 0
    sessions: Any = info.get("sessions")
    rows = cast(list[Any], sessions) if isinstance(sessions, list) else []
    running = sum(
        1
        for s in rows
        if isinstance(s, dict)
        and (cast(dict[str, Any], s).get("busy") or cast(dict[str, Any], s).get("tasks"))
    )
    return max(others, running)


def busy_message(info: Mapping[str, Any]) -> str:
    return (
        f"the daemon of another build ({info.get('build')}, pid {info.get('pid')}) serves "
        f"{in_use(info)} other caller(s); it is replaced once they are done (`tether daemon "
        "stop` replaces it now, cancelling their turns)"
    )


def replace(channel: Channel, info: Mapping[str, Any], path: Path) -> bool:
    """A daemon of another build (an upgrade, an edited checkout): stopped when nobody else
    uses it (True). Else it is left to its callers (False), and asked to leave once they
    are done when it knows how (``retires`` in its info); an older one leaves when idle."""
    if in_use(info):
        if info.get("retires"):
            with contextlib.suppress(DaemonUnavailable, DaemonRefused):
                channel.result("tether/daemonStop", {"whenIdle": True})
        channel.close()
        return False
    stop(channel, path)
    return True


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


STOP_TIMEOUT_S = 20.0
"""How long a daemon that agreed to stop may take (it waits up to 10 s for each print-mode
command it stops, then saves every session)."""


def stop(channel: Channel, path: Path, timeout: float = STOP_TIMEOUT_S) -> None:
    """Stop the daemon on ``channel`` and wait until its socket is gone. One that does not
    answer (stopped, hung) is ended by its pid: SIGTERM (and SIGCONT, so a stopped one
    saves its sessions), then SIGKILL. Raises ``DaemonUnavailable`` when what listens is
    not a Tether daemon, or does not go."""
    pid = channel.peer_pid()
    try:
        channel.result("tether/daemonStop")
    except DaemonNotAnswering as e:
        channel.close()
        _end(pid, path, e)
        return
    except NotADaemon:
        channel.close()
        if _gone(path, pid, 1.0):  # it was leaving anyway
            return
        raise
    except DaemonRefused:
        pass  # an older daemon that takes no params; it was asked plainly
    channel.close()
    if not _gone(path, pid, timeout):
        raise DaemonUnavailable(
            f"the daemon{f' (pid {pid})' if pid else ''} agreed to stop but is still there "
            f"after {timeout:.0f} s; its log is {_log_beside(path)}"
        )


def _gone(path: Path, pid: int | None, timeout: float) -> bool:
    """Wait until the socket is gone (the daemon removes it last)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not (path.exists() or path.is_symlink()):
            return True
        if pid is not None and not _alive(pid):
            _remove_leftovers(path)
            return True
        time.sleep(0.02)
    return False


def _end(pid: int | None, path: Path, why: DaemonUnavailable) -> None:
    """End a daemon that does not answer, by pid: only the daemon that wrote ``path``'s pid
    file and listens there is signalled (never a pid read from a file alone)."""
    if pid is None or _pid_file(path) != pid:
        raise DaemonUnavailable(
            f"{why}; it is not known to be a Tether daemon (no matching pid file), so it is "
            "left running: end it yourself"
        )
    for sig in (signal.SIGTERM, signal.SIGCONT):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    if _gone(path, pid, 5.0):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if not _gone(path, pid, 5.0):
        raise DaemonUnavailable(f"the daemon (pid {pid}) does not end, even with SIGKILL")
    _remove_leftovers(path)


def _pid_file(path: Path) -> int | None:
    try:
        raw = path.with_suffix(".pid").read_text().strip()
    except OSError:
        return None
    return int(raw) if raw.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_leftovers(path: Path) -> None:
    """The socket and pid file of a daemon that ended without cleaning up."""
    for leftover in (path, path.with_suffix(".pid")):
        with contextlib.suppress(OSError):
            leftover.unlink()


def _log_beside(path: Path) -> Path:
    return path.with_suffix(".log")


AFTER_ENV = "TETHER_DAEMON_AFTER"
"""A daemon started by a call that ran in-process waits for that process to leave before it
imports anything heavy: the call's last moments are the user's, not the daemon's."""


LOCK_FD_ENV = "TETHER_DAEMON_LOCK_FD"
"""The daemon's life lock, taken by the process that starts it (``claim_life_lock``) and
handed over as an open file descriptor: from the moment it is spawned, the daemon is seen
starting (``tether daemon stop`` right after a first call waits for it and stops it)."""


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
        os.close(lock)  # the daemon's copy keeps the lock


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
        f"{log_path(env)} (run `tether daemon run` to see it in the foreground, or use "
        "--no-daemon)"
    )
