"""``tether daemon start|stop|status|run``."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tether.daemon.channel import Channel, DaemonUnavailable, try_connect
from tether.daemon.client import (
    LOCK_FD_ENV,
    claim_life_lock,
    connect,
    daemon_info,
    daemon_starting,
    stop,
    wait_for_socket,
    wait_for_starter,
)
from tether.daemon.paths import alive_lock_path, ensure_private, runtime_dir, socket_path

if TYPE_CHECKING:  # the command line's path stays free of the daemon's imports
    from tether.daemon.printing import RunCommand

IDLE_ENV = "TETHER_DAEMON_IDLE_S"
WARM_UP_TIMEOUT_S = 30.0
DEFAULT_IDLE_TIMEOUT_S = 5 * 60.0
"""How long a daemon nobody uses (no client, no session) stays up: long enough for the next
command of a session of work to find it warm, short enough that forgotten ones go."""


def add_parser(sub: Any) -> None:
    """Add ``daemon`` to the ``tether`` subcommands (argparse's subparsers action)."""
    daemon = sub.add_parser("daemon", help="the warm daemon the terminal and editors share")
    action = daemon.add_subparsers(dest="daemon_command", required=True)
    action.add_parser("start", help="start it (clients also start it on first use)")
    action.add_parser("stop", help="stop it (sessions are saved; turns running are cancelled)")
    status = action.add_parser("status", help="is it running, which build, which sessions")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    run = action.add_parser("run", help="run it in the foreground (what `start` starts)")
    run.add_argument(
        "--idle-timeout",
        type=float,
        help="exit after this many seconds without clients or sessions (default: "
        f"${IDLE_ENV}, else the user setting daemonIdleTimeout, else {DEFAULT_IDLE_TIMEOUT_S:.0f})",
    )


_life_lock: list[int] = []


def take_life_lock() -> bool:
    """Hold this daemon's life lock for the rest of the process: the one its spawner took
    for it (``client.LOCK_FD_ENV``), else taken first thing (``tether daemon run`` by hand).
    Of two daemons started at once, one serves and the other leaves, and a client sees a
    daemon that is starting and waits for it instead of starting another."""
    ensure_private(runtime_dir())
    fd = _inherited_life_lock()
    if fd is None:
        fd = claim_life_lock()
    if fd is None:
        return False
    _life_lock.append(fd)  # held open until the process exits
    return True


def _inherited_life_lock() -> int | None:
    """The life lock descriptor the spawner handed over, if it is that lock and held."""
    raw = os.environ.pop(LOCK_FD_ENV, "")
    if not raw.isdigit():
        return None
    fd = int(raw)
    try:
        held, path = os.fstat(fd), os.stat(alive_lock_path())
        if (held.st_dev, held.st_ino) != (path.st_dev, path.st_ino):
            return None  # not the lock (a stray variable): leave that descriptor alone
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already: a no-op
    except OSError:
        return None
    os.set_inheritable(fd, False)  # nothing the daemon runs holds it
    return fd


def idle_timeout(flag: float | None) -> float:
    """Seconds before an unused daemon exits: the flag, ``$TETHER_DAEMON_IDLE_S``, the user
    setting ``daemonIdleTimeout``, the default. A bad value is named and skipped."""
    if flag is not None and flag > 0:
        return flag
    raw = os.environ.get(IDLE_ENV, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if value > 0:
            return value
        print(
            f"{IDLE_ENV}={raw!r} is not a number of seconds above 0; ignored (set it to, "
            "say, 600, or unset it)",
            file=sys.stderr,
        )
    from tether.settings.load import load_user_settings

    setting = load_user_settings().settings.daemon_idle_timeout
    return setting if setting is not None else DEFAULT_IDLE_TIMEOUT_S


def daemon_command(args: argparse.Namespace, run_command: RunCommand) -> int:
    """``run_command``: how the daemon runs a print-mode call (``cli.main.run_local``)."""
    path = socket_path()
    if args.daemon_command == "run":
        if not take_life_lock():
            print(f"a tether daemon runs or is starting already ({path})", file=sys.stderr)
            return 0
        # Holding the lock, so that `tether daemon stop` sees this daemon starting.
        wait_for_starter(os.environ)
        from tether.daemon.server import run_daemon

        return run_daemon(path, idle_timeout(args.idle_timeout), run_command)
    try:
        return _client_command(args, path)
    except DaemonUnavailable as e:  # (a runtime directory of another user is an OSError)
        print(f"tether: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tether: {e}", file=sys.stderr)
        return 1


def _client_command(args: argparse.Namespace, path: Path) -> int:
    if args.daemon_command == "start":
        started = time.monotonic()
        channel = connect()
        info = daemon_info(channel)
        # Ready means warm: the next command is as quick as any later one.
        deadline = started + WARM_UP_TIMEOUT_S
        while not info.get("warm", True) and time.monotonic() < deadline:
            time.sleep(0.02)
            info = daemon_info(channel)
        channel.close()
        print(
            f"tether daemon {info['build']} running (pid {info['pid']}, {path}); "
            f"ready in {time.monotonic() - started:.2f} s"
        )
        return 0
    sock = try_connect(path)
    if sock is None and args.daemon_command == "stop" and daemon_starting():
        sock = wait_for_socket(path)  # one is starting: it is the one to stop
    if sock is None:
        print(f"no tether daemon is running ({path})", file=sys.stderr)
        return 3 if args.daemon_command == "status" else 0
    channel = Channel(sock, path)
    if args.daemon_command == "stop":
        stop(channel, path)
        print("tether daemon stopped")
        return 0
    try:
        info = daemon_info(channel)
    finally:
        channel.close()
    if args.json:
        print(json.dumps(info))
        return 0
    uptime = time.time() - float(info.get("startedAt", time.time()))
    listed: Any = info.get("sessions")
    sessions = cast(list[Any], listed) if isinstance(listed, list) else []
    rows = [cast(dict[str, Any], s) for s in sessions if isinstance(s, dict)]
    print(
        f"tether daemon {info.get('build')}: pid {info.get('pid')}, up {uptime:.0f} s, "
        f"{info.get('clients')} client(s), {len(rows)} open session(s)"
    )
    for s in rows:
        print(
            f"  {s.get('sessionId')}  {s.get('workspace')}{'  (running)' if s.get('busy') else ''}"
        )
    return 0
