"""The Python Agent SDK (``claude-agent-sdk``, from PyPI) drives Tether as it drives Claude
Code: ``cli_path`` is Tether's entry point, the model is the fake Messages API. Everything
the SDK yields went through its own parser into its own types."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookContext,
    HookMatcher,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tether.testing.fake_anthropic import FakeAnthropicServer

TETHER = Path(sys.executable).with_name("tether")


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def options(
    workspace: Path, env: dict[str, str], api: FakeAnthropicServer, **kw: Any
) -> ClaudeAgentOptions:
    assert TETHER.exists(), f"the tether entry point is missing: {TETHER}"
    return ClaudeAgentOptions(
        cli_path=str(TETHER),
        cwd=str(workspace),
        env={**env, "ANTHROPIC_BASE_URL": api.base_url},
        **kw,
    )


def shape(messages: list[Message]) -> list[str]:
    out: list[str] = []
    for m in messages:
        blocks = getattr(m, "content", None)
        kinds = [type(b).__name__ for b in blocks] if isinstance(blocks, list) else []
        out.append(type(m).__name__ + (f"{kinds}" if kinds else ""))
    return out


async def test_query_reads_edits_asks_and_hooks(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    app = workspace / "src" / "app.py"
    script = [
        [say("Reading."), use("Read", file_path=str(app))],
        [use("Edit", file_path=str(app), old_string="Bye, ", new_string="Goodbye, ")],
        [use("Bash", command="touch made.txt")],
        {
            "expect": {"contains": "no shell today"},
            "blocks": [say("Edited; the shell was refused.")],
        },
    ]
    asked: list[tuple[str, str | None]] = []
    hooked: list[tuple[str, str]] = []

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], ctx: ToolPermissionContext
    ) -> Any:
        asked.append((name, ctx.tool_use_id))
        if name == "Bash":
            return PermissionResultDeny(message="no shell today")
        return PermissionResultAllow()

    async def pre_tool_use(data: Any, tool_use_id: str | None, ctx: HookContext) -> Any:
        hooked.append((data["hook_event_name"], data["tool_name"]))
        return {}

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": "Tidy up the farewell"}}

    with FakeAnthropicServer(script) as api:
        opts = options(
            workspace,
            daemon_env,
            api,
            can_use_tool=can_use_tool,
            hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[pre_tool_use])]},
        )
        messages = [m async for m in query(prompt=prompts(), options=opts)]
        api.assert_complete()

    assert shape(messages) == [
        "SystemMessage",
        "AssistantMessage['TextBlock']",
        "AssistantMessage['ToolUseBlock']",
        "UserMessage['ToolResultBlock']",
        "AssistantMessage['ToolUseBlock']",
        "UserMessage['ToolResultBlock']",
        "AssistantMessage['ToolUseBlock']",
        "UserMessage['ToolResultBlock']",
        "AssistantMessage['TextBlock']",
        "ResultMessage",
    ]
    init, result = messages[0], messages[-1]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert "Edit" in init.data["tools"] and init.data["cwd"] == str(workspace)
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.num_turns) == ("success", False, 4)
    assert result.result == "Edited; the shell was refused."
    assert result.permission_denials is not None
    assert [d["tool_name"] for d in result.permission_denials] == ["Bash"]
    assert "Goodbye, " in app.read_text()
    assert not (workspace / "made.txt").exists()
    # Read needs no question in the default mode; the edit and the command do.
    assert [name for name, _ in asked] == ["Edit", "Bash"]
    assert all(tool_use_id for _, tool_use_id in asked)
    assert hooked == [("PreToolUse", "Read"), ("PreToolUse", "Edit"), ("PreToolUse", "Bash")]
    bash_result = messages[7]
    assert isinstance(bash_result, UserMessage)
    block = bash_result.content[0]
    assert isinstance(block, ToolResultBlock) and block.is_error


def sleepers(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return found.stdout.split()


async def test_interrupt_stops_a_long_bash_call(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    if shutil.which("pgrep") is None:
        pytest.skip("pgrep is needed to see the command's process")
    marker = "sleep 41.25"
    script = [
        [use("Bash", command=f"touch started.txt && {marker} && touch finished.txt")],
        {"expect": {"contains": "again"}, "blocks": [say("Still here.")]},
    ]
    with FakeAnthropicServer(script) as api:
        opts = options(workspace, {**daemon_env, **print_path}, api, allowed_tools=["Bash"])
        async with ClaudeSDKClient(opts) as client:
            await client.query("run the long command")
            first: list[Message] = []
            async for message in client.receive_response():
                first.append(message)
                if isinstance(message, AssistantMessage) and any(
                    isinstance(b, ToolUseBlock) and b.name == "Bash" for b in message.content
                ):
                    # Bounded wait for the command to be running, then interrupt it.
                    for _ in range(400):
                        if (workspace / "started.txt").exists() and sleepers(marker):
                            break
                        await asyncio.sleep(0.05)
                    assert sleepers(marker), "the command never started"
                    await client.interrupt()
            await client.query("again")
            second = [m async for m in client.receive_response()]
        api.assert_complete()

    result = first[-1]
    assert isinstance(result, ResultMessage)
    assert result.subtype == "error_during_execution" and result.is_error
    assert result.terminal_reason == "aborted"
    closing = [m for m in first if isinstance(m, UserMessage)]
    assert closing[-1].content == [TextBlock(text="[Request interrupted by user for tool use]")]
    for _ in range(200):
        if not sleepers(marker):
            break
        await asyncio.sleep(0.05)
    assert not sleepers(marker), "the interrupted command is still running"
    assert not (workspace / "finished.txt").exists()
    # The session goes on after the interrupt.
    end = second[-1]
    assert isinstance(end, ResultMessage) and end.result == "Still here." and not end.is_error


async def test_sdk_mcp_server_mode_and_model(workspace: Path, daemon_env: dict[str, str]) -> None:
    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calc = create_sdk_mcp_server("calc", tools=[add])
    script = [
        [use("mcp__calc__add", a=2, b=3)],
        {"expect": {"contains": "5"}, "blocks": [say("2 + 3 = 5")]},
    ]
    with FakeAnthropicServer(script) as api:
        opts = options(
            workspace, daemon_env, api, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"]
        )
        async with ClaudeSDKClient(opts) as client:
            await client.set_permission_mode("acceptEdits")
            await client.set_model("haiku")
            await client.query("add 2 and 3")
            messages = [m async for m in client.receive_response()]
            status = await client.get_mcp_status()
        api.assert_complete()

    statuses = [m for m in messages if isinstance(m, SystemMessage)]
    init = next(m for m in statuses if m.subtype == "init")
    assert init.data["model"] == "claude-haiku-5-5"
    assert init.data["permissionMode"] == "acceptEdits"
    assert "mcp__calc__add" in init.data["tools"]
    assert {"name": "calc", "status": "connected"} in init.data["mcp_servers"]
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert results and isinstance(results[0], ToolResultBlock) and results[0].content == "5"
    assert all(r["model"] == "claude-haiku-5-5" for r in api.requests)
    offered = [t["name"] for t in api.requests[0]["tools"]]
    assert "mcp__calc__add" in offered
    (calc_status,) = [s for s in status["mcpServers"] if s["name"] == "calc"]
    assert calc_status["status"] == "connected" and calc_status["source"] == "sdk"
    assert calc_status["serverInfo"]["name"] == "calc"
    assert [t["name"] for t in calc_status["tools"]] == ["add"]
    end = messages[-1]
    assert isinstance(end, ResultMessage) and end.result == "2 + 3 = 5"


async def test_a_bad_model_is_an_error_result(workspace: Path, daemon_env: dict[str, str]) -> None:
    with FakeAnthropicServer([]) as api:
        opts = options(workspace, daemon_env, api, model="gpt-4o")
        messages: list[Message] = []
        with contextlib.suppress(Exception):
            async for message in query(prompt="hello", options=opts):
                messages.append(message)
        assert api.requests == []
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.errors and "unknown model 'gpt-4o'" in result.errors[0]


async def test_agents_defined_by_the_program(workspace: Path, daemon_env: dict[str, str]) -> None:
    reviewer = AgentDefinition(
        description="Reviews a change", prompt="You are the strict reviewer.", tools=["Read"]
    )
    script = [
        [
            use(
                "Agent",
                description="review it",
                prompt="Review src/app.py",
                subagent_type="reviewer",
            )
        ],
        [say("Looks fine.")],
        {"expect": {"contains": "Looks fine."}, "blocks": [say("Reviewed.")]},
    ]
    with FakeAnthropicServer(script) as api:
        opts = options(workspace, daemon_env, api, agents={"reviewer": reviewer})
        messages = [m async for m in query(prompt="review my change", options=opts)]
        api.assert_complete()
    end = messages[-1]
    assert isinstance(end, ResultMessage) and end.result == "Reviewed."
    sub_request = api.requests[1]
    system = "\n".join(block["text"] for block in sub_request["system"])
    assert "You are the strict reviewer." in system
    offered = [t["name"] for t in sub_request["tools"]]
    assert "Read" in offered and "Edit" not in offered and "Bash" not in offered


async def test_every_control_request_gets_an_answer(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    """Handled requests answer; one Tether does not offer, or an unknown one, is an error
    naming it (never silence, which would leave the program waiting)."""
    with FakeAnthropicServer([[say("Hi.")]]) as api:
        async with ClaudeSDKClient(options(workspace, daemon_env, api)) as client:
            await client.query("hello")
            _ = [m async for m in client.receive_response()]
            usage = await client.get_context_usage()
            with pytest.raises(Exception, match="rewind_files is not supported by Tether"):
                await client.rewind_files("some-user-message")
            with pytest.raises(Exception, match="no MCP server named 'nope'"):
                await client.reconnect_mcp_server("nope")
            query_ = client._query  # pyright: ignore[reportPrivateUsage]
            assert query_ is not None
            with pytest.raises(Exception, match="Unsupported control request subtype: frob"):
                await query_._send_control_request({"subtype": "frob"})  # pyright: ignore[reportPrivateUsage]
            with pytest.raises(Exception, match="set_max_thinking_tokens works only before"):
                await query_._send_control_request(  # pyright: ignore[reportPrivateUsage]
                    {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 2048}
                )
            models = await query_._send_control_request({"subtype": "list_models"})  # pyright: ignore[reportPrivateUsage]
            interrupted = await query_._send_control_request({"subtype": "interrupt"})  # pyright: ignore[reportPrivateUsage]
        api.assert_complete()
    assert usage["totalTokens"] > 0 and usage["maxTokens"] >= usage["totalTokens"]
    assert {m["value"] for m in models["models"]} == {"sonnet", "opus", "haiku"}
    assert interrupted == {"still_queued": []}


async def test_mcp_call_with_check_permissions_is_decided_as_the_model_call(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    """``mcp_call`` with ``check_permissions`` goes through the permission pipeline, so
    ``disallowedTools`` holds; without it the control channel is trusted (the SDK's d.ts)."""
    server = Path(__file__).parent.parent / "support" / "mcp_server.py"
    ext = {"type": "stdio", "command": sys.executable, "args": [str(server)]}
    call = {"subtype": "mcp_call", "tool": "mcp__ext__write_note", "arguments": {"text": "a note"}}
    with FakeAnthropicServer([[say("Hi.")]]) as api:
        opts = options(
            workspace,
            daemon_env,
            api,
            mcp_servers={"ext": ext},  # type: ignore[dict-item]
            disallowed_tools=["mcp__ext__write_note"],
        )
        async with ClaudeSDKClient(opts) as client:
            await client.query("hello")
            _ = [m async for m in client.receive_response()]
            query_ = client._query  # pyright: ignore[reportPrivateUsage]
            assert query_ is not None
            with pytest.raises(Exception, match=r"did not run|denied|disallowed"):
                await query_._send_control_request({**call, "check_permissions": True})  # pyright: ignore[reportPrivateUsage]
            trusted = await query_._send_control_request(call)  # pyright: ignore[reportPrivateUsage]
        api.assert_complete()
    assert "saved: a note" in str(trusted)
