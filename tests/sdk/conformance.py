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
from pathlib import Path
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
    ResultMessage,
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

    @tool("rm", "Remove everything", {})
    async def rm(_args: dict[str, Any]) -> dict[str, Any]:
        calls.append(["rm"])  # type: ignore[list-item]
        return {"content": [{"type": "text", "text": "removed"}]}

    # The Python SDK has no tool policies: rm is simply not allowed (no question in -p).
    calc = create_sdk_mcp_server("calc", tools=[add, rm])
    opts = options(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    return {
        "messages": await collect(query(prompt="add 2 and 40", options=opts)),
        "callbacks": calls,
    }


async def item_mcp_external() -> dict[str, Any]:
    command, *args = os.environ["MCP_SERVER"].split(" ")
    server = {"type": "stdio", "command": command, "args": args}

    async def replace(_data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
        output = {"content": [{"type": "text", "text": "REPLACED-BY-HOOK"}]}
        return {
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": output}
        }

    opts = options(
        mcp_servers={"ext": server},
        allowed_tools=["mcp__ext__echo"],
        hooks={"PostToolUse": [HookMatcher(matcher="mcp__ext__echo", hooks=[replace])]},
        add_dirs=[f"{CWD}/no-such-directory"],
    )
    prompt = "echo through the external server"
    return {"messages": await collect(query(prompt=prompt, options=opts)), "callbacks": []}


async def item_hooks() -> dict[str, Any]:
    seen: list[list[Any]] = []

    def record(
        output: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
    ) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def callback(data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
            seen.append([data["hook_event_name"], data.get("tool_name", data.get("source"))])
            return await output(data)

        return callback

    def fixed(answer: dict[str, Any]) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        async def give(_data: dict[str, Any]) -> dict[str, Any]:
            return answer

        return give

    async def slow(data: dict[str, Any]) -> dict[str, Any]:
        if "late" in data["tool_input"]["command"]:
            await asyncio.sleep(2.5)
        return {}

    async def redact(data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
        output = {**data["tool_response"], "stdout": "REDACTED-BY-HOOK"}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}

    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no edits in this test",
        }
    }
    hooks: Any = {
        "SessionStart": [HookMatcher(hooks=[record(fixed({}))])],
        "UserPromptSubmit": [
            HookMatcher(hooks=[record(fixed({"systemMessage": "house style applies"}))])
        ],
        "PreToolUse": [
            HookMatcher(matcher="Write | Edit", hooks=[record(fixed(deny))]),
            HookMatcher(matcher="Bash", hooks=[record(slow)], timeout=1),
        ],
        "PostToolUse": [
            HookMatcher(hooks=[record(fixed({}))]),
            HookMatcher(matcher="Bash", hooks=[redact]),
        ],
        "PostToolUseFailure": [HookMatcher(hooks=[record(fixed({}))])],
        "Stop": [HookMatcher(hooks=[record(fixed({}))])],
    }
    opts = options(hooks=hooks, allowed_tools=["Bash"])
    messages = await collect(query(prompt=one_prompt("look around"), options=opts))
    return {"messages": messages, "callbacks": seen}


async def item_permissions() -> dict[str, Any]:
    asked: list[list[str]] = []
    hooked: list[list[Any]] = []

    async def can_use_tool(name: str, data: dict[str, Any], _ctx: Any) -> Any:
        asked.append([name, data.get("command") or data["file_path"].rsplit("/", 1)[-1]])
        if name == "Write":
            return PermissionResultAllow(
                updated_input={
                    **data,
                    "content": "written as the program said\n",
                    "mood": "cheerful",
                }
            )
        if data.get("command") == "touch one.txt":
            rule = PermissionRuleValue(tool_name="Bash", rule_content="touch two.txt")
            update = PermissionUpdate(
                type="addRules", rules=[rule], behavior="allow", destination="session"
            )
            return PermissionResultAllow(updated_input={}, updated_permissions=[update])
        await asyncio.sleep(1)  # the hook answers first
        return PermissionResultAllow(updated_input=data)

    async def decide(data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
        command = data["tool_input"].get("command")
        hooked.append([data["tool_name"], command])
        if command != "touch three.txt":
            return {}
        decision = {"behavior": "deny", "message": "not this one"}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}

    hooks: Any = {"PermissionRequest": [HookMatcher(hooks=[decide])]}
    settings = Path(CWD) / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(touch one.txt)"]}}))
    try:
        opts = options(can_use_tool=can_use_tool, hooks=hooks, setting_sources=[])
        messages = await collect(query(prompt=one_prompt("make some files"), options=opts))
    finally:
        settings.unlink()
    return {"messages": messages, "callbacks": {"asked": asked, "hooked": hooked}}


async def item_modes() -> dict[str, Any]:
    asked: list[list[Any]] = []

    async def can_use_tool(name: str, data: dict[str, Any], _ctx: Any) -> Any:
        asked.append([name, data.get("file_path")])  # Claude Code keeps the plan in a file
        if name != "ExitPlanMode":
            return PermissionResultDeny(message="only the plan is asked")
        update = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")
        return PermissionResultAllow(updated_input=data, updated_permissions=[update])

    async with ClaudeSDKClient(options(can_use_tool=can_use_tool)) as client:
        await client.set_permission_mode("plan")
        await client.set_model("sonnet")
        await client.query("tidy up the farewell")
        messages = await collect(client.receive_response())
    return {"messages": messages, "callbacks": asked}


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


async def item_prompts() -> dict[str, Any]:
    seen: list[list[Any]] = []
    client_box: list[ClaudeSDKClient] = []

    async def check(data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
        # Which prompt (Tether's hook text also holds the held prompt's and the document's
        # text, docs/agent-sdk.md).
        words = [w for w in ("summarise", "farewell", "forbidden") if w in data["prompt"]]
        seen.append(["UserPromptSubmit", words[0] if words else data["prompt"]])
        if "forbidden" in data["prompt"]:
            return {"decision": "block", "reason": "not that word"}
        return {}

    async def can_use_tool(name: str, data: dict[str, Any], _ctx: Any) -> Any:
        seen.append(["canUseTool", name])
        await client_box[0].query("also mind the farewell")
        await asyncio.sleep(0.5)
        return PermissionResultAllow(updated_input=data)

    async def first_prompts() -> AsyncIterator[dict[str, Any]]:
        yield {
            "type": "user",
            "message": {"role": "user", "content": "context: the secret is mango"},
            "parent_tool_use_id": None,
            "shouldQuery": False,
        }
        document = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "The plan is to ship."},
        }
        content = [{"type": "text", "text": "summarise the document"}, document]
        yield {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": None,
        }

    hooks: Any = {"UserPromptSubmit": [HookMatcher(hooks=[check])]}
    messages: list[dict[str, Any]] = []
    async with ClaudeSDKClient(options(hooks=hooks, can_use_tool=can_use_tool)) as client:
        client_box.append(client)
        await client.query(first_prompts())
        summary = False
        while not summary:
            async for message in client.receive_response():
                messages.append(wire(message))
                if isinstance(message, ResultMessage):
                    summary = "summary" in (message.result or "")
        await client.query("forbidden words")
        messages += await collect(client.receive_response())
    return {"messages": messages, "callbacks": seen}


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
    seen: list[list[Any]] = []
    reviewer = AgentDefinition(
        description="Reviews a change",
        prompt="You are the strict reviewer.",
        tools=["Read", "Write"],
        model="sonnet",
    )

    async def pre(data: Any, _tool_use_id: Any, _ctx: Any) -> dict[str, Any]:
        seen.append(
            ["PreToolUse", data["tool_name"], data.get("agent_type"), bool(data.get("agent_id"))]
        )
        return {}

    async def can_use_tool(name: str, data: dict[str, Any], ctx: Any) -> Any:
        seen.append(["canUseTool", name, bool(ctx.agent_id)])
        return PermissionResultAllow(updated_input=data)

    hooks: Any = {"PreToolUse": [HookMatcher(hooks=[pre])]}
    opts = options(agents={"reviewer": reviewer}, hooks=hooks, can_use_tool=can_use_tool)
    messages = await collect(query(prompt=one_prompt("review my change"), options=opts))
    return {"messages": messages, "callbacks": seen}


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
