"""The warm daemon: its life (start, status, stop, idle exit, replaced by another build), its
privacy (another user cannot connect), and several clients on one live session."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.daemon.paths import socket_path
from tether.lsp.testing.editor_client import EditorOptions, FakeEditor

from .conftest import MODEL, make_editor

BASH_ECHO = {"type": "tool_use", "name": "Bash", "input": {"command": "echo shared > out.txt"}}


def tether(
    env: dict[str, str], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def env(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {**daemon_env, "TETHER_RUNTIME_DIR": str(tmp_path / "run")}
    yield values
    tether(values, "daemon", "stop")


def status(env: dict[str, str]) -> dict[str, Any] | None:
    done = tether(env, "daemon", "status", "--json")
    return json.loads(done.stdout) if done.returncode == 0 else None


def test_start_status_stop(env: dict[str, str]) -> None:
    assert status(env) is None
    started = tether(env, "daemon", "start")
    assert started.returncode == 0, started.stderr
    info = status(env)
    # Ready means warm: its own offline call done, the next one is as quick as any.
    assert info is not None and info["sessions"] == [] and info["warm"] is True
    path = socket_path({**os.environ, **env})
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    stopped = tether(env, "daemon", "stop")
    assert stopped.returncode == 0
    assert status(env) is None
    assert not path.exists()


def test_another_user_cannot_connect(env: dict[str, str]) -> None:
    needs_root()
    assert tether(env, "daemon", "start").returncode == 0
    assert peer_probe_as(65534, socket_path({**os.environ, **env})) == "PermissionError"
    assert status(env) is not None  # the daemon is unharmed


def test_a_daemon_of_another_build_is_replaced(env: dict[str, str]) -> None:
    old_env = {**env, "TETHER_BUILD_ID": "old-build"}
    assert tether(old_env, "daemon", "start").returncode == 0
    old = status(old_env)
    assert old is not None and old["build"] == "old-build"
    new_env = {**env, "TETHER_BUILD_ID": "new-build"}
    assert tether(new_env, "daemon", "start").returncode == 0
    new = status(new_env)
    assert new is not None and new["build"] == "new-build"
    assert new["pid"] != old["pid"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(old["pid"], 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the old daemon is still running")


def gone(path: Path, timeout: float = 20) -> bool:
    """Whether the daemon's socket goes away within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not path.exists()


def test_idle_daemon_exits(env: dict[str, str]) -> None:
    idle = {**env, "TETHER_DAEMON_IDLE_S": "1"}
    assert tether(idle, "daemon", "start").returncode == 0
    assert gone(socket_path({**os.environ, **idle})), "the daemon did not exit when idle"


def test_a_daemon_a_call_starts_as_it_leaves_is_seen_and_stopped_at_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A call with no daemon runs in-process and starts one as it leaves: that daemon holds
    its life lock from the moment it is spawned (its spawner hands it over), so a
    ``daemon stop`` right after the call, before the daemon has even imported anything,
    stops it rather than missing it and leaving it to idle on."""
    from tether.daemon.client import daemon_starting
    from tether.testing.fake_anthropic import FakeAnthropicServer

    cold = {**env, "TETHER_NO_DAEMON": "0"}
    with FakeAnthropicServer([[{"type": "text", "text": "Hello."}]]) as api:
        done = tether({**cold, "ANTHROPIC_BASE_URL": api.base_url}, "run", "hi")
    assert done.returncode == 0, done.stderr
    merged = {**os.environ, **cold}
    assert daemon_starting(merged), "the daemon the call started is not seen starting"
    assert tether(cold, "daemon", "stop").returncode == 0
    deadline = time.monotonic() + 20
    while daemon_starting(merged) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not daemon_starting(merged), "the daemon lived on after daemon stop"
    assert status(cold) is None


def test_the_idle_time_comes_from_the_user_settings_and_a_bad_value_is_named(
    env: dict[str, str],
) -> None:
    settings = Path(env["XDG_CONFIG_HOME"]) / "tether" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"daemonIdleTimeout": 1}))
    bad = {**env, "TETHER_DAEMON_IDLE_S": "soon"}
    assert tether(bad, "daemon", "start").returncode == 0
    path = socket_path({**os.environ, **bad})
    assert gone(path), "the daemon did not take daemonIdleTimeout from the user settings"
    log = path.with_suffix(".log").read_text()
    assert "TETHER_DAEMON_IDLE_S='soon' is not a number of seconds" in log


async def test_a_daemon_with_a_client_and_a_session_stays(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    idle = {**env, "TETHER_DAEMON_IDLE_S": "1"}
    path = socket_path({**os.environ, **idle})
    editor = await connected(idle, workspace, fake_api([]))
    try:
        await editor.new_session()
        assert not gone(path, timeout=3), "the daemon left a client with an open session"
    finally:
        await editor.stop()
    assert gone(path), "the daemon stayed after its last client and session went"


async def connected(env: dict[str, str], folder: Path, api: Any, **options: Any) -> FakeEditor:
    editor = make_editor(EditorOptions(init_options={"model": MODEL}, **options))
    await editor.start(
        [sys.executable, "-m", "tether", "serve", "--connect"],
        [folder],
        env={**env, "ANTHROPIC_BASE_URL": api.base_url},
    )
    return editor


async def test_two_clients_follow_one_session(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    slow = {"chunk_delay_ms": 150, "blocks": [{"type": "text", "text": "slow " * 60}]}
    api = fake_api(
        [
            [BASH_ECHO],
            [{"type": "text", "text": "ran it"}],
            slow,
            [BASH_ECHO],
            [{"type": "text", "text": "answered by the other"}],
        ]
    )
    driver = await connected(env, workspace, api)
    follower = await connected(env, workspace, api)
    try:
        session = await driver.new_session()
        loaded = await follower.request("tether/loadSession", {"sessionId": session})
        assert loaded["sessionId"] == session

        # 1. Both see every update; the question goes to the client that started the turn.
        result = await driver.prompt(session, "run it")
        assert result["stopReason"] == "end_turn"
        assert (workspace / "out.txt").exists()
        assert len(driver.permission_requests) == 1 and follower.permission_requests == []
        await follower.wait_for_update(
            lambda u: u["sessionId"] == session and u["update"]["kind"] == "turn_end"
        )
        kinds = [u["kind"] for u in driver.updates_of(session)]
        assert [u["kind"] for u in follower.updates_of(session)] == kinds

        # 2. The follower cancels a turn the driver started.
        running = asyncio.create_task(driver.prompt(session, "talk slowly"))
        await follower.wait_for_update(
            lambda u: u["update"]["kind"] == "agent_message_chunk" and "slow" in u["update"]["text"]
        )
        await follower.request("tether/cancel", {"sessionId": session})
        assert (await asyncio.wait_for(running, 30))["stopReason"] == "cancelled"

        # 3. The driver leaves while asked: the question goes to the follower, once.
        asked = asyncio.Event()

        async def never_answers(params: dict[str, Any]) -> str | None:
            asked.set()
            await asyncio.sleep(3600)
            return None

        driver.asker = never_answers
        (workspace / "out.txt").unlink()
        third = asyncio.create_task(driver.prompt(session, "run it again"))
        await asyncio.wait_for(asked.wait(), 30)
        assert not third.done()
        # The driver's editor dies (its proxy with it): the daemon sees the client leave.
        driver.client._server.kill()  # pyright: ignore
        with contextlib.suppress(RuntimeError):  # pygls reports the killed process
            await driver.client.stop()
        ends = len([u for u in follower.updates_of(session) if u["kind"] == "turn_end"])
        await follower.wait_for_update(
            lambda u: (
                u["sessionId"] == session
                and u["update"]["kind"] == "turn_end"
                and len([x for x in follower.updates_of(session) if x["kind"] == "turn_end"]) > ends
            ),
            timeout=60,
        )
        assert len(follower.permission_requests) == 1
        assert (workspace / "out.txt").exists()
    finally:
        await follower.stop()
    api.assert_complete()


async def test_initialize_reports_the_editors_credentials_not_the_daemons(
    env: dict[str, str], workspace: Path
) -> None:
    """Through ``serve --connect``, what ``initialize`` says about the model comes from the
    editor's environment: a daemon started without a key still sees the editor's, and a
    daemon's own key is not reported to an editor that has none."""
    without = {**env, "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""}
    started = tether(without, "daemon", "start")
    assert started.returncode == 0, started.stderr

    async def facts(editor_env: dict[str, str]) -> dict[str, Any]:
        editor = FakeEditor(EditorOptions(init_options={}))
        result = await editor.start(
            [sys.executable, "-m", "tether", "serve", "--connect"], [workspace], env=editor_env
        )
        try:
            return (result.capabilities.experimental or {})["tether"]
        finally:
            await editor.stop()

    with_key = await facts({**without, "ANTHROPIC_API_KEY": "editor-key"})
    assert (with_key["model"], with_key["modelSource"]) == (
        "anthropic:claude-sonnet-4-6",
        "ANTHROPIC_API_KEY",
    )
    tether(without, "daemon", "stop")
    assert tether(env, "daemon", "start").returncode == 0  # this daemon has a key
    none = await facts(without)
    assert none["model"] is None and "ANTHROPIC_API_KEY" in none["modelReason"]


def needs_root() -> None:
    if os.getuid() != 0:
        if os.environ.get("TETHER_REQUIRE_SANDBOX") == "1":
            pytest.fail("CI must run as root to check the daemon against another uid")
        pytest.skip("needs root to run a process as another user")


def peer_probe(path: Path) -> str:
    """Ask the daemon at ``path`` for its info: "answered", "closed" or why it could not connect."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tether/daemonInfo", "params": {}})
    got = b""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(20)
        try:
            s.connect(str(path))
        except OSError as e:
            return type(e).__name__
        try:  # a reset or a broken pipe after the connection is the daemon closing it
            s.sendall(f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
            while b'"id": 1' not in got and b'"id":1' not in got:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass
    return "answered" if b'"result"' in got else "closed" if not got else "other"


def peer_probe_as(uid: int, path: Path) -> str:
    """``peer_probe`` from a forked child that became ``uid``: no program to exec, so
    nothing the other user must be able to read (a system python3 or this one)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        result = "error"
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            result = peer_probe(path)
        except BaseException as e:
            result = f"error {type(e).__name__}: {e}"
        finally:
            os.write(w, result.encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


def test_a_connection_from_another_uid_is_refused_by_its_peer_credentials(
    daemon_env: dict[str, str],
) -> None:
    """The socket's folder and mode keep other users out; if they ever let one in (a
    mistake, a shared runtime folder), the daemon still refuses it by ``SO_PEERCRED``."""
    needs_root()
    base = Path(tempfile.mkdtemp(prefix="tether-peer-", dir="/var/tmp"))
    env = {**daemon_env, "TETHER_RUNTIME_DIR": str(base / "run")}
    try:
        assert tether(env, "daemon", "start").returncode == 0
        path = socket_path({**os.environ, **env})
        assert peer_probe(path) == "answered"
        for folder in (base, path.parent):
            folder.chmod(0o711)  # the mistake: others may reach the socket
        path.chmod(0o666)
        assert peer_probe_as(65534, path) == "closed"
        assert status(env) is not None  # the daemon is unharmed
    finally:
        tether(env, "daemon", "stop")
        shutil.rmtree(base, ignore_errors=True)
