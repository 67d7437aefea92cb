"""One program written for the Python Agent SDK (``claude-agent-sdk``), run item by item
against whichever CLI ``CLAUDE_CLI`` names: the twin of ``conformance.mjs`` (same items, same
environment, same report), run by ``tests/e2e/test_agent_sdk_conformance.py``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, is_dataclass
from typing import Any

from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import PermissionRuleValue

CLI = os.environ["CLAUDE_CLI"]
CWD = os.environ["WORKSPACE"]


def options(**kw: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=CLI, cwd=CWD, **kw)


def wire(message: Message) -> dict[str, Any]:
    """The message in the stream-json shape the report compares (type, subtype, blocks)."""
    name = type(message).__name__
    data: dict[str, Any] = asdict(message) if is_dataclass(message) else {}  # type: ignore[arg-type]
    if name == "SystemMessage" or name.startswith("Task"):
        return {"type": "system", "subtype": data.get("subtype", name), **data.get("data", {})}
    if name == "ResultMessage":
        return {"type": "result", "subtype": data["subtype"], "session_id": data["session_id"]}
    if name == "StreamEvent":
        return {"type": "stream_event", "event": data["event"]}
    kind = "assistant" if name == "AssistantMessage" else "user"
    content = data.get("content")
    blocks = (
        [{"type": _block(b)} for b in message.content]  # type: ignore[attr-defined]
        if isinstance(content, list)
        else content
    )
    return {
        "type": kind,
        "message": {"content": blocks},
        "parent_tool_use_id": data.get("parent_tool_use_id"),
    }


def _block(block: Any) -> str:
    return {
        "TextBlock": "text",
        "ToolUseBlock": "tool_use",
        "ToolResultBlock": "tool_result",
        "ThinkingBlock": "thinking",
    }.get(type(block).__name__, type(block).__name__)


async def collect(messages: AsyncIterator[Message]) -> list[dict[str, Any]]:
    return [wire(m) async for m in messages]


async def one_prompt(text: str) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "user", "message": {"role": "user", "content": text}}


async def item_mcp() -> dict[str, Any]:
    calls: list[list[int]] = []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append([args["a"], args["b"]])
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calc = create_sdk_mcp_server("calc", tools=[add])
    opts = options(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    return {
        "messages": await collect(query(prompt="add 2 and 40", options=opts)),
        "callbacks": calls,
    }


async def item_mcp_external() -> dict[str, Any]:
    command, *args = os.environ["MCP_SERVER"].split(" ")
    server = {"type": "stdio", "command": command, "args": args}
    opts = options(mcp_servers={"ext": server}, allowed_tools=["mcp__ext__echo"])
    prompt = "echo through the external server"
    return {"messages": await collect(query(prompt=prompt, options=opts)), "callbacks": []}


async def item_hooks() -> dict[str, Any]:
    seen: list[list[Any]] = []

    def record(output: dict[str, Any]) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def callback(data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
            seen.append([data["hook_event_name"], data.get("tool_name", data.get("source"))])
            return output

        return callback

    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no shell in this test",
        }
    }
    hooks: Any = {
        "SessionStart": [HookMatcher(hooks=[record({})])],
        "UserPromptSubmit": [HookMatcher(hooks=[record({})])],
        "PreToolUse": [HookMatcher(matcher="Bash", hooks=[record(deny)])],
        "PostToolUse": [HookMatcher(hooks=[record({})])],
        "PostToolUseFailure": [HookMatcher(hooks=[record({})])],
        "Stop": [HookMatcher(hooks=[record({})])],
    }
    opts = options(hooks=hooks)
    messages = await collect(query(prompt=one_prompt("look around"), options=opts))
    return {"messages": messages, "callbacks": seen}


async def item_permissions() -> dict[str, Any]:
    asked: list[list[str]] = []

    async def can_use_tool(name: str, data: dict[str, Any], _ctx: Any) -> Any:
        asked.append([name, data.get("command") or data["file_path"].rsplit("/", 1)[-1]])
        if name == "Write":
            return PermissionResultAllow(
                updated_input={**data, "content": "written as the program said\n"}
            )
        if data.get("command") == "touch one.txt":
            rule = PermissionRuleValue(tool_name="Bash", rule_content="touch two.txt")
            update = PermissionUpdate(
                type="addRules", rules=[rule], behavior="allow", destination="session"
            )
            return PermissionResultAllow(updated_permissions=[update])
        return PermissionResultDeny(message="not this one")

    opts = options(can_use_tool=can_use_tool)
    messages = await collect(query(prompt=one_prompt("make some files"), options=opts))
    return {"messages": messages, "callbacks": asked}


async def item_modes() -> dict[str, Any]:
    async with ClaudeSDKClient(options()) as client:
        await client.set_permission_mode("acceptEdits")
        await client.set_model("sonnet")
        await client.query("tidy up the farewell")
        messages = await collect(client.receive_response())
    return {"messages": messages, "callbacks": []}


async def item_interrupt() -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    async with ClaudeSDKClient(options(allowed_tools=["Bash(python3:*)"])) as client:
        await client.query("run the long command")
        async for message in client.receive_response():
            line = wire(message)
            messages.append(line)
            blocks = line.get("message", {}).get("content") or []
            if line["type"] == "assistant" and any(b["type"] == "tool_use" for b in blocks):
                await asyncio.sleep(1.5)
                await client.interrupt()
        await client.query("are you there?")
        messages += await collect(client.receive_response())
    return {"messages": messages, "callbacks": []}


async def item_resume() -> dict[str, Any]:
    first = await collect(query(prompt="remember the word plum", options=options()))
    session_id = first[-1]["session_id"]
    opts = options(resume=session_id, fork_session=True)
    second = await collect(query(prompt="which word was it?", options=opts))
    forked = second[-1]["session_id"] != session_id
    return {"messages": first + second, "callbacks": [], "forked": forked}


async def item_partial() -> dict[str, Any]:
    opts = options(include_partial_messages=True)
    return {"messages": await collect(query(prompt="say hello", options=opts)), "callbacks": []}


async def item_agents() -> dict[str, Any]:
    reviewer = AgentDefinition(
        description="Reviews a change", prompt="You are the strict reviewer.", tools=["Read"]
    )
    opts = options(agents={"reviewer": reviewer})
    messages = await collect(query(prompt="review my change", options=opts))
    return {"messages": messages, "callbacks": []}


ITEMS: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
    name.removeprefix("item_"): fn for name, fn in globals().items() if name.startswith("item_")
}


async def main() -> None:
    chosen = (os.environ.get("ITEMS") or ",".join(ITEMS)).split(",")
    report: dict[str, Any] = {}
    for name in chosen:
        try:
            report[name] = await ITEMS[name]()
        except Exception as e:  # the report says which item failed and how
            report[name] = {"error": f"{type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(report, default=str) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
