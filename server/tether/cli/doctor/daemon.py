"""The warm daemon: running (and of this build), starting, not running, or gone and leaving
its socket behind; where its socket and log are."""

from __future__ import annotations

import os
import socket
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from tether.cli.doctor.report import Finding
from tether.daemon.build import build_id
from tether.daemon.channel import Channel, DaemonNotAnswering, DaemonUnavailable, NotADaemon
from tether.daemon.client import daemon_starting, in_use
from tether.daemon.paths import log_path, runtime_dir, socket_path

AREA = "daemon"
ANSWER_TIMEOUT_S = 3.0


def check_daemon(env: Mapping[str, str]) -> Finding:
    directory = runtime_dir(env)
    sock, log = socket_path(env), log_path(env)
    details = (f"socket: {sock}", f"log: {log}")
    problem = _directory_problem(directory)
    if problem is not None:
        fix = "set TETHER_RUNTIME_DIR to a directory of your own (mode 0700)"
        return Finding(AREA, "fail", problem, details, fix)
    if not (sock.exists() or sock.is_symlink()):
        if daemon_starting(env):
            return Finding(AREA, "info", "starting", details)
        summary = "not running (the first tether -p or editor starts it)"
        return Finding(AREA, "info", summary, details)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(ANSWER_TIMEOUT_S)
    try:
        client.connect(str(sock))
    except (ConnectionRefusedError, FileNotFoundError):
        client.close()
        return _stale(sock, details)
    except OSError as e:
        client.close()
        return Finding(AREA, "fail", f"cannot use the socket {sock}: {e}", details)
    return _running(Channel(client), details)


def _directory_problem(directory: Path) -> str | None:
    try:
        info = directory.lstat()
    except FileNotFoundError:
        return None  # made (0700) when the daemon first starts
    except OSError as e:
        return f"the runtime directory {directory} cannot be read: {e}"
    if not stat.S_ISDIR(info.st_mode):
        return f"the runtime directory {directory} is not a directory"
    if info.st_uid != os.getuid():
        return f"the runtime directory {directory} belongs to another user (uid {info.st_uid})"
    return None


def _stale(sock: Path, details: tuple[str, ...]) -> Finding:
    pid_file = sock.with_suffix(".pid")
    try:
        pid = pid_file.read_text().strip()
    except OSError:
        pid = ""
    gone = f" (pid {pid} is gone)" if pid.isdigit() and not _alive(int(pid)) else ""
    return Finding(
        AREA,
        "warn",
        f"a stale socket: no daemon listens on {sock}{gone}; it ended without cleaning up",
        details,
        "nothing to do: the next call starts a daemon that replaces it (or remove the file); "
        "the log may say why it ended",
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _running(channel: Channel, details: tuple[str, ...]) -> Finding:
    pid = channel.peer_pid()
    who = f" (pid {pid})" if pid is not None else ""
    try:
        info = channel.call_object("tether/daemonInfo", timeout=ANSWER_TIMEOUT_S)
    except NotADaemon as e:
        fix = "stop that program, or set TETHER_RUNTIME_DIR to a directory of your own"
        return Finding(AREA, "fail", f"not a Tether daemon: {e}", details, fix)
    except DaemonNotAnswering:
        return Finding(
            AREA,
            "fail",
            f"the daemon{who} does not answer within {ANSWER_TIMEOUT_S:.0f} s: it is stopped "
            "or hung (tether -p runs in-process meanwhile)",
            details,
            "tether daemon stop (it ends a daemon that does not answer); the next call "
            "starts a fresh one",
        )
    except (DaemonUnavailable, RuntimeError) as e:
        fix = "tether daemon stop; the next call starts a fresh one"
        return Finding(AREA, "fail", f"the daemon{who} does not answer: {e}", details, fix)
    finally:
        channel.close()
    uptime = time.time() - float(info.get("startedAt", time.time()))
    sessions: Any = info.get("sessions")
    count = len(cast(list[Any], sessions)) if isinstance(sessions, list) else 0
    summary = (
        f"running: pid {info.get('pid')}, up {uptime:.0f} s, {info.get('clients')} client(s), "
        f"{count} open session(s)"
    )
    if info.get("build") != build_id():
        summary += f"; of another build ({info.get('build')})"
        if in_use(info) > 0:
            summary += ": it is replaced once its callers are done (tether -p runs in-process)"
        else:
            summary += ": the next call replaces it"
        return Finding(AREA, "info", summary, details)
    return Finding(AREA, "ok", summary, details)
