"""A call that finds the daemon still warming up runs in-process instead of waiting for
the warm-up (a cold run is quicker than the wait)."""

from __future__ import annotations

import socket
from pathlib import Path

from tether.cli.remote import RunHere, run_remote
from tether.daemon.paths import socket_path, warm_path


def test_a_daemon_not_yet_warm_is_not_waited_for(tmp_path: Path) -> None:
    env = {"TETHER_RUNTIME_DIR": str(tmp_path / "run"), "HOME": str(tmp_path)}
    path = socket_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(path))
    listening.listen()
    listening.setblocking(False)
    try:
        # A daemon that listens but has not warmed up: not even connected to.
        assert run_remote(["-p", "hi"], env) == RunHere(start_daemon=False)
        try:
            listening.accept()
            accepted = True
        except BlockingIOError:
            accepted = False
        assert not accepted
        assert not warm_path(path).exists()
    finally:
        listening.close()
