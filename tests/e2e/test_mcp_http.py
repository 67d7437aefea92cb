"""MCP over streamable HTTP, end to end through `tether run`: the SDK's own server (started
here) with instructions, a resource, a prompt and a tool list that changes mid-session; its
API key comes from the environment through the configured headers."""

from __future__ import annotations

import importlib.util
import json
import socket
from pathlib import Path
from typing import Any

from tether.testing.fake_anthropic import FakeAnthropicServer

from .test_cli import run_cli

SUPPORT = Path(__file__).resolve().parents[1] / "support" / "mcp_docs_server.py"


def load_support() -> Any:
    spec = importlib.util.spec_from_file_location("tether_test_mcp_docs", SUPPORT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def test_prompt_resource_instructions_and_changing_tools(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    docs = load_support()
    with docs.DocsServer(free_port(), key="s3cret") as server:
        settings = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        entry = {"type": "http", "url": server.url, "headers": {"X-Api-Key": "${DOCS_KEY}"}}
        settings.write_text(json.dumps({"mcpServers": {"docs": entry}}))
        script: list[Any] = [
            {"expect": {"contains": "about spinning"}, "blocks": [use("mcp__docs__unlock")]},
            [use("mcp__docs__secret")],
            [
                use("ListMcpResourcesTool"),
                use("ReadMcpResourceTool", server="docs", uri="docs://handbook"),
            ],
            {"expect": {"contains": "42 rpm"}, "blocks": [{"type": "text", "text": "Done."}]},
        ]
        with FakeAnthropicServer(script) as api:
            env = {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url, "DOCS_KEY": "s3cret"}
            done = run_cli(
                workspace,
                env,
                "--allowedTools",
                "mcp__docs",
                "/mcp__docs__review spinning and @docs:docs://handbook",
            )
            assert done.returncode == 0, done.stderr
            api.assert_complete()
            bodies = api.requests
    assert server.seen_keys and set(server.seen_keys) == {"s3cret"}
    first = bodies[0]
    # Server instructions are in the system prompt.
    assert docs.INSTRUCTIONS in json.dumps(first["system"])
    # The prompt command became the server's prompt; the @ mention attached the resource.
    prompt = json.dumps(first["messages"][0])
    assert "Review the widget docs about spinning and" in prompt
    assert "Widgets spin at 42 rpm." in prompt and "/mcp__docs__review" not in prompt
    # The tool list changed mid-session: the next request offers the new tool.
    assert "mcp__docs__unlock" in tool_names(first)
    assert "mcp__docs__secret" not in tool_names(first)
    assert "mcp__docs__secret" in tool_names(bodies[1])
    secret = json.dumps(bodies[2]["messages"][-1])
    assert "the secret is 7" in secret
    # The resource tools listed and read the handbook.
    assert {"ListMcpResourcesTool", "ReadMcpResourceTool"} <= set(tool_names(first))
    last = json.dumps(bodies[3]["messages"][-1])
    assert "docs://handbook" in last and "Widgets spin at 42 rpm." in last
