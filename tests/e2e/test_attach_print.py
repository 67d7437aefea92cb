"""A ``tether -p`` turn the warm daemon runs is one of its sessions like any other: listed
by ``tether daemon status``, followed by ``tether attach`` (live stream), cancelled from
there; the ``-p`` caller sees its turn end as cancelled."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_attach import Terminal


@pytest.fixture
def env(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {**daemon_env, "TETHER_RUNTIME_DIR": str(tmp_path / "run"), "TETHER_NO_DAEMON": "0"}
    started = tether(values, "daemon", "start")
    assert started.returncode == 0, started.stderr
    yield values
    tether(values, "daemon", "stop")


def tether(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def print_sessions(env: dict[str, str]) -> list[dict[str, Any]]:
    done = tether(env, "daemon", "status", "--json")
    assert done.returncode == 0, done.stderr
    return [s for s in json.loads(done.stdout)["sessions"] if s.get("print")]


async def test_a_print_mode_turn_is_followed_and_cancelled_from_another_terminal(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    slow = {"chunk_delay_ms": 100, "blocks": [{"type": "text", "text": "slow " * 200}]}
    api = fake_api([slow])
    hold = api.hold(0, after_events=3)  # mid-stream until the terminal is attached
    run_env = {**os.environ, **env, "ANTHROPIC_BASE_URL": api.base_url}
    printing = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether",
        "-p",
        "talk slowly",
        "--model",
        "claude-sonnet-4-6",
        "--output-format",
        "json",
        cwd=workspace,
        env=run_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert await asyncio.to_thread(hold.reached.wait, 60), "the turn never reached the model"
        # The daemon lists the print call's session, busy.
        (listed,) = await asyncio.to_thread(print_sessions, env)
        assert listed["busy"] is True and Path(listed["workspace"]) == workspace.resolve()
        session = listed["sessionId"]
        # `tether sessions` (the caller's transcripts) has it too.
        sessions = await asyncio.to_thread(tether, env, "sessions", "--cwd", str(workspace))
        assert session in sessions.stdout, sessions.stdout + sessions.stderr

        attach = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tether",
            "attach",
            session,
            cwd=workspace,
            env=run_env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        terminal = Terminal(attach)
        await terminal.until(f"attached to {session}")
        # Its prompts stay with the -p caller: a line typed here is refused, saying why.
        terminal.type("do something else\n")
        await terminal.until("is run by `tether -p` in another terminal")
        hold.release()
        # The live stream reaches the attached terminal as the -p caller receives it.
        await terminal.until("slow slow", where="out")

        # Ctrl+C there cancels the -p caller's turn.
        attach.send_signal(signal.SIGINT)
        await terminal.until("turn ended (cancelled)")
        out, err = await asyncio.wait_for(printing.communicate(), 60)
        result = json.loads(out)
        assert result["session_id"] == session, err
        # What the caller's own Ctrl+C gives in-process: the turn aborted by the user.
        assert (result["subtype"], result["terminal_reason"], result["errors"]) == (
            "error_during_execution",
            "aborted",
            ["cancelled by the user"],
        ), result
        assert printing.returncode == 1
        assert await terminal.leave() == 0
    finally:
        if printing.returncode is None:
            printing.kill()
            await printing.wait()
    # The call is over: its session is no longer listed as a print call's.
    assert await asyncio.to_thread(print_sessions, env) == []
    assert len(api.requests) == 1  # cancelled, not retried, and nothing asked again
