"""ACP: the handshake, modes and config options, slash commands, and a full turn streamed
as session/update notifications."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from .acp.harness import MODEL, running_agent


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def test_a_full_turn_streams_every_kind_of_update(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    unsaved = app.read_text().replace("Hello", "Howdy (unsaved)")
    todos = [
        {"content": "Read app.py", "status": "completed", "activeForm": "Reading app.py"},
        {"content": "Explain it", "status": "in_progress", "activeForm": "Explaining it"},
    ]
    api = fake_api(
        [
            [
                {"type": "thinking", "thinking": "The user wants a summary."},
                {"type": "text", "text": "Let me look at the file first."},
                tool("Read", file_path=str(app)),
                tool("TodoWrite", todos=todos),
            ],
            {
                "blocks": say("It greets people, politely."),
                "expect": {"contains": "Howdy (unsaved)"},
            },
        ]
    )
    async with running_agent(workspace, daemon_env, api) as agent:
        agent.client.buffers[str(app)] = unsaved
        session = await agent.new_session()
        response = await agent.prompt(session, "What does src/app.py do?")
        client = agent.client
        assert response.stop_reason == "end_turn"

        assert str(app) in client.reads  # the read went through the editor's buffer
        thought = "".join(u.content.text for u in client.updates_of(session, "agent_thought_chunk"))
        assert thought == "The user wants a summary."
        chunks = client.updates_of(session, "agent_message_chunk")
        assert len(chunks) > 2  # streamed in pieces, not in one final message
        assert "".join(c.content.text for c in chunks) == (
            "Let me look at the file first.It greets people, politely."
        )
        read_call = next(u for u in client.updates_of(session, "tool_call") if u.kind == "read")
        assert read_call.title == "Read src/app.py"
        assert read_call.status == "pending"
        assert [loc.path for loc in read_call.locations] == [str(app)]
        finished = [
            u
            for u in client.updates_of(session, "tool_call_update")
            if u.tool_call_id == read_call.tool_call_id and u.status == "completed"
        ]
        assert "Howdy (unsaved)" in finished[0].content[0].content.text
        (plan,) = client.updates_of(session, "plan")
        assert [(e.content, e.status) for e in plan.entries] == [
            ("Read app.py", "completed"),
            ("Explain it", "in_progress"),
        ]
        usage = client.updates_of(session, "usage_update")
        assert usage and usage[-1].size > 0 and usage[-1].used > 0
        assert usage[-1].cost is not None and usage[-1].cost.currency == "USD"
        # The user's own words are not echoed back during a live turn.
        assert client.updates_of(session, "user_message_chunk") == []
    api.assert_complete()


async def test_handshake_modes_and_config_options(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    async with running_agent(workspace, daemon_env) as agent:
        answer = agent.recorder.received[0]["result"]
        assert answer["protocolVersion"] == 1
        caps = answer["agentCapabilities"]
        assert caps["loadSession"] is True
        assert caps["promptCapabilities"] == {
            "image": True,
            "audio": False,
            "embeddedContext": True,
        }
        assert caps["mcpCapabilities"] == {"http": True, "sse": False}
        assert set(caps["sessionCapabilities"]) == {"list", "resume", "close"}
        assert answer["authMethods"][0]["id"] == "anthropic-api-key"
        assert answer["agentInfo"]["name"] == "tether"

        created = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        session = created.session_id
        assert created.modes.current_mode_id == "default"
        assert [m.id for m in created.modes.available_modes] == [
            "default",
            "acceptEdits",
            "plan",
            "bypassPermissions",
            "dontAsk",
        ]
        by_id = {o.id: o for o in created.config_options}
        assert by_id["mode"].category == "mode" and by_id["mode"].current_value == "default"
        assert by_id["model"].category == "model" and by_id["model"].current_value == MODEL

        await agent.conn.set_session_mode(session_id=session, mode_id="plan")
        await agent.client.wait_for(
            lambda s, u: u.session_update == "current_mode_update" and u.current_mode_id == "plan"
        )
        answer = await agent.conn.set_config_option(
            config_id="model", session_id=session, value="anthropic:claude-haiku-4-5"
        )
        values = {o.id: o.current_value for o in answer.config_options}
        assert values == {"mode": "plan", "model": "anthropic:claude-haiku-4-5"}
        answer = await agent.conn.set_config_option(
            config_id="mode", session_id=session, value="acceptEdits"
        )
        assert {o.id: o.current_value for o in answer.config_options}["mode"] == "acceptEdits"
        await agent.client.wait_for(
            lambda s, u: (
                u.session_update == "config_option_update"
                and u.config_options[0].current_value == "acceptEdits"
            )
        )
        for config_id, value in [("mode", "yolo"), ("model", "nope:x"), ("color", "red")]:
            with pytest.raises(RequestError) as error:
                await agent.conn.set_config_option(
                    config_id=config_id, session_id=session, value=value
                )
            assert error.value.code == -32602
        with pytest.raises(RequestError) as error:
            await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert error.value.code == -32602


async def test_slash_commands_are_advertised_and_expanded(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    commands = workspace / ".tether" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone warmly\nargument-hint: <name>\n---\n"
        "Say a warm hello to $ARGUMENTS.\n"
    )
    script = [{"blocks": say("Hello, Ada!"), "expect": {"contains": "warm hello to Ada"}}]
    async with running_agent(workspace, daemon_env, script=script) as agent:
        session = await agent.new_session()
        update = await agent.client.wait_for(
            lambda s, u: s == session and u.session_update == "available_commands_update"
        )
        (greet,) = update.available_commands
        assert (greet.name, greet.description) == ("greet", "Greet someone warmly")
        assert greet.input.root.hint == "<name>"
        # Sent after the answer that names the session: clients drop updates for sessions
        # they do not know yet.
        wire_order = [
            m.get("method") or (m.get("result") or {}).get("sessionId")
            for m in agent.recorder.received
        ]
        assert wire_order.index(session) < wire_order.index("session/update")
        response = await agent.prompt(session, "/greet Ada")
        assert response.stop_reason == "end_turn"
