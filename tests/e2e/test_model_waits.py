"""A model server that takes the request and answers nothing: each front door shows the wait
(``tether -p`` on stderr when stderr is for chatter, an editor as a progress notice, an ACP
client as the agent's thought), then fails the turn with the URL, the wait and the fix. The
wait comes from the caller's ``API_TIMEOUT_MS`` (in-process and through the warm daemon)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError

from tether.testing.silent import SilentServer

from .acp.harness import running_agent
from .conftest import running_daemon


def run_print(workspace: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", "-p", "hi", "--model", "sonnet", *args],
        cwd=workspace,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("verbose", [True, False])
def test_print_mode_names_the_silent_server_and_the_fix(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str], verbose: bool
) -> None:
    with SilentServer() as server:
        env = {
            **daemon_env,
            **print_path,
            "ANTHROPIC_BASE_URL": server.url,
            "API_TIMEOUT_MS": "1500",
        }
        done = run_print(workspace, env, *(["--verbose"] if verbose else []))
        requests = server.requests
    assert done.returncode == 1 and done.stdout == ""
    err = done.stderr
    assert f"{server.url} took the request but sent nothing for 1.5 s" in err
    assert "raise the wait with API_TIMEOUT_MS" in err
    assert requests == 1
    # The wait shows on stderr only when stderr is for chatter (a terminal, or --verbose).
    assert (f"[tether] waiting for {server.url} (" in err) == verbose, err


async def test_an_editor_sees_the_wait_and_the_turn_fails_with_the_fix(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    with SilentServer("headers") as server:
        env = {**daemon_env, "ANTHROPIC_BASE_URL": server.url, "API_TIMEOUT_MS": "1500"}
        async with running_daemon([workspace], env) as editor:
            session = await editor.new_session()
            result = await editor.prompt(session, "hello?")
            updates = editor.updates_of(session)
    assert result["stopReason"] == "error"
    assert f"{server.url} took the request but sent nothing for 1.5 s" in result["error"]["message"]
    waits = [u for u in updates if u["kind"] == "notice" and u.get("progress")]
    assert waits and waits[0]["message"].startswith(f"waiting for {server.url} (")
    assert waits[0]["level"] == "info"
    end = updates[-1]
    assert end["kind"] == "turn_end" and "API_TIMEOUT_MS" in end["error"]["message"]


async def test_an_acp_client_sees_the_wait_as_a_thought_and_the_prompt_fails(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    with SilentServer() as server:
        env = {**daemon_env, "API_TIMEOUT_MS": "1500"}
        async with running_agent(workspace, env, server) as agent:
            session = await agent.new_session()
            with pytest.raises(RequestError) as error:
                await agent.prompt(session, "hello?")
            thoughts = [
                u.content.text
                for s, u in agent.client.updates
                if s == session and u.session_update == "agent_thought_chunk"
            ]
    assert error.value.code == -32603
    assert f"{server.url} took the request but sent nothing for 1.5 s" in str(error.value)
    assert any(t.startswith(f"waiting for {server.url} (") for t in thoughts), thoughts
