"""ACP: cancelling a turn, and sessions that outlive the agent process (load, list,
resume, close)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from .acp.harness import running_agent

SLOW_TEXT = {"chunk_delay_ms": 100, "blocks": [{"type": "text", "text": "slowly " * 60}]}


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def test_cancel_mid_stream(workspace: Path, daemon_env: dict[str, str]) -> None:
    async with running_agent(workspace, daemon_env, script=[SLOW_TEXT, say("after")]) as agent:
        session = await agent.new_session()
        turn = asyncio.create_task(agent.prompt(session, "talk"))
        await agent.client.wait_for(lambda s, u: u.session_update == "agent_message_chunk")
        await agent.conn.cancel(session_id=session)
        response = await asyncio.wait_for(turn, 10)
        assert response.stop_reason == "cancelled"
        chunks = agent.client.updates_of(session, "agent_message_chunk")
        streamed = "".join(u.content.text for u in chunks)
        assert 0 < len(streamed) < len("slowly " * 60)
        # The session stays usable.
        again = await agent.prompt(session, "again")
        assert again.stop_reason == "end_turn"


async def test_cancel_while_a_permission_question_is_open(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    script = [[tool("Bash", command="echo never > out.txt")]]
    async with running_agent(workspace, daemon_env, script=script) as agent:
        agent.client.answers.append("hold")
        session = await agent.new_session()
        turn = asyncio.create_task(agent.prompt(session, "go"))
        await agent.client.wait_for(lambda s, u: bool(agent.client.permission_requests))
        await agent.conn.cancel(session_id=session)
        agent.client.cancelled.set()  # what a client does with open questions on cancel
        response = await asyncio.wait_for(turn, 10)
        assert response.stop_reason == "cancelled"
        assert not (workspace / "out.txt").exists()


async def test_cancel_stops_a_command_in_the_client_terminal(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    script = [[tool("Bash", command="sleep 30")]]
    async with running_agent(workspace, daemon_env, script=script) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="bypassPermissions")
        turn = asyncio.create_task(agent.prompt(session, "wait"))
        await agent.client.wait_for(lambda s, u: bool(agent.client.terminals))
        await agent.conn.cancel(session_id=session)
        response = await asyncio.wait_for(turn, 10)
        assert response.stop_reason == "cancelled"
        (terminal,) = agent.client.terminals.values()
        assert terminal.released and terminal.proc.returncode is not None


async def test_sessions_outlive_the_process(workspace: Path, daemon_env: dict[str, str]) -> None:
    """List, load (the history replayed first), close, resume (no replay)."""
    app = workspace / "src" / "app.py"
    first = [[*say("Reading it."), tool("Read", file_path=str(app))], say("It greets people.")]
    async with running_agent(workspace, daemon_env, script=first) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "What does app.py do?")

    later = [{"blocks": say("Still here."), "expect": {"contains": "And now?"}}]
    async with running_agent(workspace, daemon_env, script=later) as agent:
        client = agent.client
        (info,) = (await agent.conn.list_sessions(cwd=str(workspace))).sessions
        assert (info.session_id, info.cwd) == (session, str(workspace))
        assert info.title == "What does app.py do?"

        loaded = await agent.conn.load_session(
            cwd=str(workspace), session_id=session, mcp_servers=[]
        )
        assert loaded.modes.current_mode_id == "default"
        history = [u for s, u in client.updates if s == session]
        kinds = [u.session_update for u in history]
        assert kinds[0] == "user_message_chunk"
        assert history[0].content.text == "What does app.py do?"
        said = "".join(u.content.text for u in history if u.session_update == "agent_message_chunk")
        assert said == "Reading it.It greets people."
        (read,) = [u for u in history if u.session_update == "tool_call"]
        assert (read.kind, read.title) == ("read", "Read src/app.py")
        (result,) = [u for u in history if u.session_update == "tool_call_update"]
        assert result.tool_call_id == read.tool_call_id and result.status == "completed"
        assert "Hello" in result.content[0].content.text
        assert kinds.index("tool_call") < kinds.index("tool_call_update")
        await client.wait_for(lambda s, u: u.session_update == "available_commands_update")
        assert (await agent.prompt(session, "And now?")).stop_reason == "end_turn"

        await agent.conn.close_session(session_id=session)
        with pytest.raises(RequestError) as error:
            await agent.prompt(session, "hello?")
        assert error.value.code == -32602
        before = len(client.updates)
        await agent.conn.resume_session(cwd=str(workspace), session_id=session, mcp_servers=[])
        # A replay would come before the answer, the command list after it.
        await client.wait_for(lambda s, u: len(client.updates) > before)
        kinds = [u.session_update for _, u in client.updates[before:]]
        assert kinds == ["available_commands_update"]  # nothing replayed

        with pytest.raises(RequestError) as error:
            await agent.conn.load_session(cwd=str(workspace), session_id="nope", mcp_servers=[])
        assert error.value.code == -32002
