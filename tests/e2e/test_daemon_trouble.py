"""A daemon that cannot be used never costs a ``tether -p`` its run: one that is stopped,
a listener that is not a Tether daemon, a runtime directory of another user, a daemon of
another build running someone else's turn (an upgrade). Each is named (on a terminal or
with ``--verbose``), the call runs in this process, and ``tether daemon stop|status`` say
what they found instead of hanging or printing a traceback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.daemon.paths import socket_path


def tether(
    env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env={**os.environ, **env},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def env(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {**daemon_env, "TETHER_RUNTIME_DIR": str(tmp_path / "run"), "TETHER_NO_DAEMON": "0"}
    yield values
    tether(values, "daemon", "stop", timeout=60)


def answer(tmp_path: Path, name: str, text: str = "Done.") -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps([[{"type": "text", "text": text}]]))
    return f"scripted:{path}"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def daemon_pid(env: dict[str, str]) -> int:
    done = tether(env, "daemon", "status", "--json")
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)["pid"])


def test_a_stopped_daemon(env: dict[str, str], workspace: Path, tmp_path: Path) -> None:
    env = {**env, "TETHER_DAEMON_ANSWER_S": "2"}  # each call waits this long for an answer
    assert tether(env, "daemon", "start").returncode == 0
    pid = daemon_pid(env)
    os.kill(pid, signal.SIGSTOP)
    try:
        done = tether(env, "-p", "hi", "--verbose", "--model", answer(tmp_path, "a"), cwd=workspace)
        assert (done.returncode, done.stdout) == (0, "Done.\n"), done.stderr
        said = [line for line in done.stderr.splitlines() if "does not answer" in line]
        assert len(said) == 1 and f"(pid {pid})" in said[0], done.stderr
        assert said[0].endswith("running in this process") and "Traceback" not in done.stderr
        # Not a terminal, no --verbose: the run is quiet, and still done.
        quiet = tether(env, "-p", "hi", "--model", answer(tmp_path, "b"), cwd=workspace)
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "Done.\n", "")
        stopped = tether(env, "daemon", "stop")
        assert (stopped.returncode, stopped.stdout) == (0, "tether daemon stopped\n")
        assert wait_gone(pid)
        assert not socket_path({**os.environ, **env}).exists()
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


class Listener:
    """Something else on the daemon's socket: it closes each connection at once, or answers
    with an HTTP error."""

    def __init__(self, path: Path, reply: bytes | None) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.reply = reply
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            if self.reply is not None:
                conn.sendall(self.reply)
                time.sleep(0.2)
            conn.close()

    def close(self) -> None:
        self.stopping.set()
        self.thread.join()
        self.sock.close()


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 400 Bad Request\r\n\r\nnot tether\n"])
def test_a_listener_that_is_not_a_daemon(
    env: dict[str, str], workspace: Path, tmp_path: Path, reply: bytes | None
) -> None:
    path = socket_path({**os.environ, **env})
    path.parent.mkdir(mode=0o700)
    listener = Listener(path, reply)
    try:
        done = tether(env, "-p", "hi", "--verbose", "--model", answer(tmp_path, "a"), cwd=workspace)
        assert (done.returncode, done.stdout) == (0, "Done.\n"), done.stderr
        assert "Traceback" not in done.stderr and "running in this process" in done.stderr
        for command in ("status", "stop", "start"):
            said = tether(env, "daemon", command)
            assert said.returncode == 1, (command, said.stdout, said.stderr)
            assert "not a Tether daemon" in said.stderr, (command, said.stderr)
            assert "Traceback" not in said.stderr and said.stdout == ""
        assert listener.thread.is_alive() and path.exists()  # nobody claimed to stop it
    finally:
        listener.close()


def test_a_runtime_directory_of_another_user(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    if os.getuid() == 0:
        squatted = tmp_path / "squatted"
        squatted.mkdir(mode=0o700)
        os.chown(squatted, 65534, 65534)
    else:
        squatted = Path("/")  # root's
    bad = {**env, "TETHER_RUNTIME_DIR": str(squatted)}
    quiet = tether(bad, "-p", "hi", "--model", answer(tmp_path, "a"), cwd=workspace)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "Done.\n", "")
    told = tether(bad, "-p", "hi", "--verbose", "--model", answer(tmp_path, "b"), cwd=workspace)
    assert (told.returncode, told.stdout) == (0, "Done.\n"), told.stderr
    lines = [line for line in told.stderr.splitlines() if line.startswith("[tether] ")]
    assert len(lines) == 1, told.stderr  # said once, not again as "could not start"
    assert "belongs to another user" in lines[0] and "TETHER_RUNTIME_DIR" in lines[0]
    assert lines[0].endswith("running in this process")


def test_stop_right_after_a_first_call(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """The first call runs in-process and starts the daemon as it leaves; ``daemon stop``
    at once (the uninstall steps) waits for that daemon and stops it."""
    done = tether(env, "-p", "hi", "--model", answer(tmp_path, "a"), cwd=workspace)
    assert done.returncode == 0, done.stderr
    stopped = tether(env, "daemon", "stop")
    assert (stopped.returncode, stopped.stdout) == (0, "tether daemon stopped\n"), stopped.stderr
    lock = socket_path({**os.environ, **env}).with_suffix(".lock")
    # No daemon comes up afterwards: nothing holds its life lock or listens.
    status = tether(env, "daemon", "status")
    assert status.returncode == 3, status.stdout
    from tether.daemon.client import daemon_starting

    assert lock.exists() and not daemon_starting({**os.environ, **env})


def test_an_upgrade_leaves_a_running_turn_alone(
    env: dict[str, str], workspace: Path, tmp_path: Path, fake_api: Any
) -> None:
    """A daemon of the old build runs a turn; the new build's call runs in this process,
    the old turn ends as it would have, and the old daemon leaves once it is idle."""
    old = {**env, "TETHER_BUILD_ID": "old-build"}
    assert tether(old, "daemon", "start").returncode == 0
    old_pid = daemon_pid(old)
    api = fake_api([{"blocks": [{"type": "text", "text": "slow " * 60}]}])
    hold = api.hold(0, after_events=2)  # the old build's turn runs until released
    running = subprocess.Popen(
        [sys.executable, "-m", "tether", "-p", "talk slowly", "--model", "claude-sonnet-4-6"],
        env={**os.environ, **old, "ANTHROPIC_BASE_URL": api.base_url},
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert hold.reached.wait(60), "the old build's turn never reached the model"
        new = {**env, "TETHER_BUILD_ID": "new-build"}
        done = tether(new, "-p", "hi", "--verbose", "--model", answer(tmp_path, "n"), cwd=workspace)
        assert (done.returncode, done.stdout) == (0, "Done.\n"), done.stderr
        assert (
            "serves 1 other caller(s)" in done.stderr and "running in this process" in done.stderr
        )
        assert alive(old_pid)
        hold.release()
        out, err = running.communicate(timeout=60)
        assert running.returncode == 0, err
        assert out == "slow " * 60 + "\n"
    finally:
        if running.poll() is None:
            running.kill()
    assert wait_gone(old_pid), "the old daemon did not leave once idle"


async def test_an_editor_is_told_when_a_daemon_of_another_build_serves_others(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """``serve --connect`` of a new build finds the old build's daemon serving another
    client: the old daemon is left running (nothing of the other client's is cut), and the
    editor is told why it runs in a process of its own, in a message it shows, then works."""
    from tether.daemon.client import connect_running
    from tether.lsp.testing.editor_client import EditorOptions

    from .conftest import make_editor

    old = {**env, "TETHER_BUILD_ID": "old-build"}
    assert tether(old, "daemon", "start").returncode == 0
    old_pid = daemon_pid(old)
    other = connect_running({**os.environ, **old})  # another client of the old daemon
    assert other is not None
    model = f"scripted:{tmp_path / 'answer.json'}"
    (tmp_path / "answer.json").write_text(json.dumps([[{"type": "text", "text": "Done."}]]))
    editor = make_editor(EditorOptions(init_options={"model": model}))
    new = {**os.environ, **env, "TETHER_BUILD_ID": "new-build"}
    await editor.start([sys.executable, "-m", "tether", "serve", "--connect"], [workspace], new)
    try:
        told = await editor.wait_for_message(lambda m: "another build" in m.message)
        assert "old-build" in told.message and "serves 1 other caller(s)" in told.message
        assert "served by a process of its own" in told.message
        session = await editor.new_session()
        assert (await editor.prompt(session, "hi"))["stopReason"] == "end_turn"
        assert alive(old_pid)
    finally:
        await editor.stop()
        other.close()
