"""``tether -p`` through the warm daemon: the same output as in-process, each caller's
environment for its own sessions, and a plain error when the daemon dies mid-turn."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TEXT = {"type": "text", "text": "Read it."}


def tether(
    env: dict[str, str], *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env={**os.environ, **env},
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
    )


@pytest.fixture
def env(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {**daemon_env, "TETHER_RUNTIME_DIR": str(tmp_path / "run"), "TETHER_NO_DAEMON": "0"}
    started = tether(values, "daemon", "start")
    assert started.returncode == 0, started.stderr
    yield values
    tether(values, "daemon", "stop")


def daemon_pid(env: dict[str, str]) -> int:
    done = tether(env, "daemon", "status", "--json")
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)["pid"])


def gone(pid: int, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def script(tmp_path: Path, name: str) -> Path:
    """A fresh script (each is used up by one run), always named ``turns.json``: the model
    name the output shows is the file's."""
    (tmp_path / name).mkdir()
    path = tmp_path / name / "turns.json"
    turns = [
        [{"type": "tool_use", "name": "Read", "input": {"file_path": "README.md"}}],
        [TEXT],
    ]
    path.write_text(json.dumps(turns))
    return path


VARYING = re.compile(
    r'("(?:session_id|uuid|duration_ms|duration_api_ms|id|tool_use_id|parent_tool_use_id)"'
    r':\s*)("[^"]*"|\d+)|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b'
    r"|\b\d+ ms\b"
)


def normal(text: str) -> str:
    """The output with what differs between any two runs (ids, durations) masked."""
    return VARYING.sub(lambda m: (m.group(1) or "") + "<v>", text)


@pytest.mark.parametrize(
    "fmt",
    [
        ["--output-format", "text"],
        ["--output-format", "json"],
        ["--output-format", "stream-json", "--verbose"],
    ],
)
def test_the_daemon_prints_what_the_process_prints(
    env: dict[str, str], workspace: Path, tmp_path: Path, fmt: list[str]
) -> None:
    outputs: list[tuple[int, str, str]] = []
    pid = daemon_pid(env)
    for no_daemon in ("0", "1"):
        model = f"scripted:{script(tmp_path, f'run-{no_daemon}')}"
        done = tether(
            {**env, "TETHER_NO_DAEMON": no_daemon},
            "-p",
            "read the readme",
            "--model",
            model,
            *fmt,
            cwd=workspace,
        )
        outputs.append((done.returncode, normal(done.stdout), normal(done.stderr)))
    assert outputs[0][0] == 0, outputs[0]
    assert outputs[0] == outputs[1]
    assert "Read it." in outputs[0][1]
    assert daemon_pid(env) == pid  # the daemon ran the first, and is still the same one


def test_a_piped_prompt_and_a_usage_error_through_the_daemon(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    model = f"scripted:{script(tmp_path, 'piped')}"
    done = tether(env, "-p", "--model", model, cwd=workspace, stdin="read the readme\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Read it.\n"
    bad = tether(env, "-p", "hi", "--no-such-flag", cwd=workspace)
    assert (bad.returncode, bad.stderr) == (
        2,
        "tether: unknown option --no-such-flag (see tether --help)\n",
    )
    empty = tether(env, "-p", cwd=workspace, stdin="")
    assert empty.returncode == 2 and "no prompt" in empty.stderr


def test_each_caller_reaches_its_own_server(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    first = fake_api([[{"type": "text", "text": "from the first"}]])
    second = fake_api([[{"type": "text", "text": "from the second"}]])
    pid = daemon_pid(env)
    one = tether(
        {**env, "ANTHROPIC_BASE_URL": first.base_url, "ANTHROPIC_API_KEY": "key-one"},
        "-p",
        "hi",
        "--model",
        "claude-sonnet-4-6",
        cwd=workspace,
    )
    two = tether(
        {**env, "ANTHROPIC_BASE_URL": second.base_url, "ANTHROPIC_API_KEY": "key-two"},
        "-p",
        "hi",
        "--model",
        "claude-sonnet-4-6",
        cwd=workspace,
    )
    assert (one.returncode, one.stdout) == (0, "from the first\n"), one.stderr
    assert (two.returncode, two.stdout) == (0, "from the second\n"), two.stderr
    first.assert_complete()
    second.assert_complete()
    assert len(first.requests) == 1 and len(second.requests) == 1
    assert daemon_pid(env) == pid


def test_a_caller_without_a_key_gets_none_of_another_callers(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    api = fake_api([[{"type": "text", "text": "keyed"}]])
    keyed = tether(
        {**env, "ANTHROPIC_BASE_URL": api.base_url},
        "-p",
        "hi",
        "--model",
        "claude-sonnet-4-6",
        cwd=workspace,
    )
    assert keyed.returncode == 0, keyed.stderr
    bare = {k: v for k, v in env.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "tether", "-p", "hi", "--model", "claude-sonnet-4-6"],
        env={k: v for k, v in {**os.environ, **bare}.items() if not k.startswith("ANTHROPIC_")},
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no API key for claude-sonnet-4-6: set ANTHROPIC_API_KEY" in done.stderr
    api.assert_complete()


def test_the_daemon_killed_mid_turn(env: dict[str, str], workspace: Path, fake_api: Any) -> None:
    slow = {"chunk_delay_ms": 200, "blocks": [{"type": "text", "text": "slow " * 100}]}
    api = fake_api([slow])
    run_env = {**os.environ, **env, "ANTHROPIC_BASE_URL": api.base_url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tether", "-p", "talk slowly", "--model", "claude-sonnet-4-6"],
        env=run_env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not api.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert api.requests, "the turn never reached the model"
    os.kill(daemon_pid(env), signal.SIGKILL)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    found = re.fullmatch(
        r"\[tether\] error: the daemon stopped during the turn \(the connection closed\); "
        r"continue with: tether -p --resume ([0-9a-f-]{36}) \.\.\.",
        lines[0],
    )
    assert found, err
    session = found.group(1)

    again = fake_api([[{"type": "text", "text": "Resumed."}]])
    resumed = tether(
        {**env, "ANTHROPIC_BASE_URL": again.base_url},
        "-p",
        "go on",
        "--resume",
        session,
        "--model",
        "claude-sonnet-4-6",
        "--output-format",
        "json",
        cwd=workspace,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["session_id"] == session
    sent = json.dumps(again.requests[0]["messages"])
    assert "talk slowly" in sent and "go on" in sent


def test_ctrl_c_stops_the_run_in_the_daemon(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    slow = {"chunk_delay_ms": 200, "blocks": [{"type": "text", "text": "slow " * 100}]}
    api = fake_api([slow, [{"type": "text", "text": "Next."}]])
    run_env = {**os.environ, **env, "ANTHROPIC_BASE_URL": api.base_url}
    pid = daemon_pid(env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tether", "-p", "talk slowly", "--output-format", "json"],
        env=run_env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not api.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert api.requests, "the turn never reached the model"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out == ""  # like in-process: Ctrl+C leaves before the result
    assert daemon_pid(env) == pid  # the daemon goes on
    # The interrupted session was saved: it continues.
    done = tether(
        {**env, "ANTHROPIC_BASE_URL": api.base_url},
        "-p",
        "go on",
        "--continue",
        "--output-format",
        "json",
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Next."
    assert "talk slowly" in json.dumps(api.requests[1]["messages"])


def test_commands_run_with_the_callers_path(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    tools = workspace / "bin"  # in the workspace: the shell's sandbox hides the rest of /tmp
    tools.mkdir()
    helper = tools / "hello-tether"
    helper.write_text("#!/bin/sh\necho from the callers PATH\n")
    helper.chmod(0o755)
    runs: dict[str, str] = {}
    for name, path in (("with", f"{tools}:{os.environ['PATH']}"), ("without", os.environ["PATH"])):
        out = workspace / f"{name}.txt"
        turns = [
            [
                {
                    "type": "tool_use",
                    "name": "Bash",
                    "input": {"command": f"hello-tether > {out.name}"},
                }
            ],
            [TEXT],
        ]
        (tmp_path / f"{name}.json").write_text(json.dumps(turns))
        done = tether(
            {**env, "PATH": path},
            "-p",
            "say hello",
            "--model",
            f"scripted:{tmp_path / f'{name}.json'}",
            "--allowedTools",
            "Bash",
            cwd=workspace,
        )
        assert done.returncode == 0, done.stderr
        runs[name] = out.read_text()
    assert runs == {"with": "from the callers PATH\n", "without": ""}


def test_a_call_replaces_a_daemon_of_another_build(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    tether(env, "daemon", "stop")
    old = {**env, "TETHER_BUILD_ID": "old-build"}
    assert tether(old, "daemon", "start").returncode == 0
    old_pid = daemon_pid(old)
    new = {**env, "TETHER_BUILD_ID": "new-build"}
    model = f"scripted:{script(tmp_path, 'new')}"
    done = tether(new, "-p", "read the readme", "--model", model, cwd=workspace)
    assert (done.returncode, done.stdout) == (0, "Read it.\n"), done.stderr
    assert gone(old_pid), "the daemon of the old build is still running"
    # The call started a daemon of its own build as it left.
    assert tether(new, "daemon", "start").returncode == 0
    info = json.loads(tether(new, "daemon", "status", "--json").stdout)
    assert info["build"] == "new-build" and info["pid"] != old_pid


def test_stopping_the_daemon_stops_a_command_and_saves_its_session(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    slow = {"chunk_delay_ms": 200, "blocks": [{"type": "text", "text": "slow " * 100}]}
    api = fake_api([slow, [{"type": "text", "text": "Next."}]])
    run_env = {**os.environ, **env, "ANTHROPIC_BASE_URL": api.base_url}
    pid = daemon_pid(env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tether", "-p", "talk slowly"],
        env=run_env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not api.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert api.requests, "the turn never reached the model"
    assert tether(env, "daemon", "stop").returncode == 0
    assert gone(pid)
    _out, err = proc.communicate(timeout=60)
    # Interrupted (130), or told the daemon stopped (1): never a success, never a hang.
    assert proc.returncode in (1, 130), err
    done = tether(
        {**env, "ANTHROPIC_BASE_URL": api.base_url},
        "-p",
        "go on",
        "--continue",
        "--output-format",
        "json",
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    assert "talk slowly" in json.dumps(api.requests[1]["messages"])
