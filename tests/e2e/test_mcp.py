"""MCP end to end: a real MCP server (the SDK, 157 tools, over stdio) behind the real engine,
the one tool pipeline and the real Anthropic SDK against the fake Messages API.

The request bodies the fake API recorded show what the model was offered: core tools and
ToolSearch first, then exactly the tools the search returned.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionAnswer, PermissionRequest
from tether.engine.engine import QueryEngine
from tether.mcp import Backoff, McpManager, McpOptions, parse_server
from tether.mcp.attach import attach
from tether.providers.anthropic import AnthropicProvider
from tether.providers.models import ModelOptions
from tether.tasks.registry import TaskRegistry
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.tools.registry import core_tools

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


class Answers:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request.tool_name)
        return "allow_once"


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[McpManager]:
    server = parse_server("t", {"command": sys.executable, "args": [str(SERVER)]})
    options = McpOptions(
        log_dir=tmp_path / "logs", connect_timeout=20, backoff=Backoff(initial=0.05)
    )
    manager = McpManager(tmp_path, [server], options)
    manager.start()
    await manager.wait_ready(timeout=20)
    assert manager.statuses()[0].state == "connected", manager.statuses()
    yield manager
    await manager.close()


def make_engine(root: Path, api: FakeAnthropicServer, answers: Answers) -> QueryEngine:
    # A 200k window: 157 MCP schemas then pass the 5% deferral share (not under 1M).
    provider = AnthropicProvider(
        "claude-sonnet-4-6",
        api_key="k",
        base_url=api.base_url,
        options=ModelOptions(context_window=200_000),
    )
    return QueryEngine(
        session_id="mcp",
        cwd=root,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(answers),
        tasks=TaskRegistry(root / "tasks"),
    )


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content)


async def test_search_then_exactly_the_discovered_schemas(
    tmp_path: Path, manager: McpManager
) -> None:
    script = [
        [use("ToolSearch", query="select:mcp__t__slack_create,mcp__t__echo")],
        [
            use("mcp__t__slack_create", id="c1", fields={"text": "hi"}),
            use("mcp__t__echo", text="hello"),
        ],
        [use("ToolSearch", query="+fail"), use("mcp__t__fail", reason="nope")],
        [use("mcp__t__image"), use("mcp__t__slack_create", limit="many")],
        say("Done."),
    ]
    answers = Answers()
    with FakeAnthropicServer(script) as api:
        engine = make_engine(tmp_path, api, answers)
        core = [t.name for t in engine.tools.core]
        detach = attach(engine, manager)
        result = await asyncio.wait_for(engine.run("post to slack"), timeout=30)
        detach()
        await engine.close()
        api.assert_complete()
        bodies = api.requests
    assert result.terminal.reason == "completed"
    # 1: core tools and ToolSearch only, although 157 MCP tools are in the pool.
    assert len(manager.tools()) == 157
    assert tool_names(bodies[0]) == [*core, "ToolSearch"]
    # 2: exactly the two discovered tools, with the server's own schemas.
    assert tool_names(bodies[1]) == [*core, "ToolSearch", "mcp__t__slack_create", "mcp__t__echo"]
    slack = next(t for t in bodies[1]["tools"] if t["name"] == "mcp__t__slack_create")
    assert slack["input_schema"]["properties"]["fields"]["additionalProperties"] == {
        "type": "string"
    }
    search = results(bodies[1])[0]
    assert '<tool-reference name="mcp__t__echo"/>' in result_text(search)
    assert "input_schema" not in result_text(search)
    # The not-read-only tool asked; the read-only one did not. Results are rendered.
    first_calls = results(bodies[2])
    assert result_text(first_calls[0]) == 'slack_create ok: {"fields": {"text": "hi"}, "id": "c1"}'
    assert result_text(first_calls[1]) == "hello"
    # A tool found and called in the same step is not loaded yet: the pipeline still runs it
    # (it is in the pool); from the next request on its schema is sent.
    assert tool_names(bodies[3])[-1] == "mcp__t__fail"
    failed = results(bodies[3])[1]
    assert failed["is_error"] is True
    assert "failed: nope" in result_text(failed)
    # An image comes back as an image; input that breaks the schema never reaches the server
    # (nor the permission question).
    image, invalid = results(bodies[4])
    assert image["content"][0]["type"] == "image"
    assert invalid["is_error"] is True
    assert "InputValidationError" in result_text(invalid)
    assert answers.asked == ["mcp__t__slack_create"]


async def test_a_crashed_server_is_reported_and_restarted(
    tmp_path: Path, manager: McpManager
) -> None:
    changes: list[str] = []
    manager.subscribe(lambda: changes.append(manager.statuses()[0].state))
    script = [
        [use("ToolSearch", query="select:mcp__t__crash,mcp__t__pid")],
        [use("mcp__t__pid")],
        [use("mcp__t__crash")],
        [use("mcp__t__pid")],
        say("Recovered."),
    ]
    with FakeAnthropicServer(script) as api:
        engine = make_engine(tmp_path, api, Answers())
        attach(engine, manager)
        await asyncio.wait_for(engine.run("crash it"), timeout=30)
        await engine.close()
        bodies = api.requests
    before = result_text(results(bodies[2])[0])
    crashed = results(bodies[3])[0]
    after = result_text(results(bodies[4])[0])
    assert crashed["is_error"] is True
    assert "closed the connection during the call" in result_text(crashed)
    assert before.isdigit() and after.isdigit() and before != after
    assert "restarting" in changes
    status = manager.statuses()[0]
    assert (status.state, status.restarts) == ("connected", 1)
    assert status.error is None
