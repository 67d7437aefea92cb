"""ACP: permission questions as session/request_permission, answered each way, and Bash in
the client's terminal (or the daemon's shell when the client has none)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .acp.harness import running_agent

COMMAND = "echo permitted > out.txt"
KINDS = ["allow_once", "allow_always", "reject_once", "reject_always"]


def bash(command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Bash", "input": {"command": command, **extra}}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def result_of(agent: Any, session: str) -> Any:
    return next(
        u
        for u in reversed(agent.client.updates_of(session, "tool_call_update"))
        if u.status in ("completed", "failed")
    )


@pytest.mark.parametrize(
    ("answer", "runs", "saved"),
    [
        ("allow_once", True, None),
        ("allow_always", True, ("allow", f"Bash({COMMAND})")),
        ("reject_once", False, None),
        ("reject_always", False, ("deny", f"Bash({COMMAND})")),
    ],
)
async def test_each_answer_to_a_permission_question(
    workspace: Path,
    daemon_env: dict[str, str],
    answer: str,
    runs: bool,
    saved: tuple[str, str] | None,
) -> None:
    async with running_agent(workspace, daemon_env, script=[[bash(COMMAND)], say("ok")]) as agent:
        agent.client.answers.append(answer)
        session = await agent.new_session()
        response = await agent.prompt(session, "go")
        assert response.stop_reason == "end_turn"
        (request,) = agent.client.permission_requests
        assert request.session_id == session
        assert [o.kind for o in request.options] == KINDS
        call = request.tool_call
        assert (call.title, call.kind, call.status) == (COMMAND, "execute", "pending")
        assert call.raw_input == {"command": COMMAND}
        assert (workspace / "out.txt").exists() is runs
        result = result_of(agent, session)
        if runs:
            # Ran in the client's terminal, which the card embeds and which was released.
            assert result.status == "completed"
            (content,) = result.content
            assert content.type == "terminal"
            terminal = agent.client.terminals[content.terminal_id]
            assert terminal.command == ["bash", "-c", COMMAND]
            assert terminal.released
        else:
            assert result.status == "failed"
            assert agent.client.terminals == {}
    local = workspace / ".tether" / "settings.local.json"
    if saved is None:
        assert not local.exists()
    else:
        kind, rule = saved
        assert json.loads(local.read_text())["permissions"][kind] == [rule]


async def test_without_client_terminals_bash_runs_in_the_daemon(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    script = [[bash("echo from-the-daemon")], say("ok")]
    async with running_agent(workspace, daemon_env, script=script, terminal=False) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "go")
        result = result_of(agent, session)
        assert result.status == "completed"
        (content,) = result.content
        assert content.type == "content"
        assert content.content.text.startswith("```console\nfrom-the-daemon")


async def test_a_client_terminal_command_that_times_out_is_killed(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    script = [
        [bash("echo started; sleep 30", timeout=300)],
        {"blocks": say("ok"), "expect": {"contains": "timed out"}},
    ]
    async with running_agent(workspace, daemon_env, script=script) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="bypassPermissions")
        response = await agent.prompt(session, "go")
        assert response.stop_reason == "end_turn"
        assert result_of(agent, session).status == "failed"
        (terminal,) = agent.client.terminals.values()
        assert terminal.released and terminal.proc.returncode is not None
        assert terminal.output.decode().startswith("started")
