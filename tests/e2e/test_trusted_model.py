"""A project's settings choose a model server, withheld until the folder is trusted. Once the
user answers yes to the trust question in an editor, that model serves the session that
asked and every later one, not the default the session started with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer

from .acp.harness import running_agent
from .conftest import running_daemon


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def project_model(workspace: Path, api: FakeOpenAIServer) -> str:
    spec = f"openai:qwen2.5-coder@{api.base_url}"
    (workspace / ".tether").mkdir(exist_ok=True)
    (workspace / ".tether" / "settings.json").write_text(json.dumps({"model": spec}))
    return spec


async def test_lsp_a_yes_to_trust_switches_to_the_projects_model(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    local = FakeOpenAIServer([say("First, from the project's model."), say("Second, too.")])
    default = FakeAnthropicServer([])  # the default model must never be asked
    with local, default:
        project_model(workspace, local)
        async with running_daemon([workspace], daemon_env, default, init_options={}) as editor:
            editor.answers = ["Trust workspace"]
            session = await editor.new_session()
            first = await editor.prompt(session, "hi")
            later = await editor.new_session()
            second = await editor.prompt(later, "hi again")
            texts = [
                "".join(u["text"] for u in editor.updates_of(s, "agent_message_chunk"))
                for s in (session, later)
            ]
        assert default.requests == []
        local.assert_complete()
    assert first["stopReason"] == second["stopReason"] == "end_turn", (first, second)
    assert texts == ["First, from the project's model.", "Second, too."]
    assert editor.message_requests[0].message.startswith("Trust the workspace")


async def test_acp_a_yes_to_trust_switches_to_the_projects_model(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    local = FakeOpenAIServer([say("First, from the project's model."), say("Second, too.")])
    default = FakeAnthropicServer([])
    with local, default:
        project_model(workspace, local)
        async with running_agent(workspace, daemon_env, default, model=None) as agent:
            agent.client.answers = ["allow_once"]
            session = await agent.new_session()
            first = await agent.prompt(session, "hi")
            later = await agent.new_session()
            second = await agent.prompt(later, "hi again")
            texts = [
                "".join(
                    u.content.text
                    for s, u in agent.client.updates
                    if s == sid and u.session_update == "agent_message_chunk"
                )
                for sid in (session, later)
            ]
        assert default.requests == []
        local.assert_complete()
    assert first.stop_reason == second.stop_reason == "end_turn"
    asked = [r.tool_call.title or "" for r in agent.client.permission_requests]
    assert len(asked) == 1 and asked[0].startswith("Trust the workspace")  # asked once
    assert texts == ["First, from the project's model.", "Second, too."]
