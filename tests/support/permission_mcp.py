"""A small MCP server over stdio for print-mode tests: ``echo`` (read-only) and ``approve``,
a permission prompt tool in Claude Code's contract (``--permission-prompt-tool``): it allows
every call except Bash, which it denies with a message."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name="echo",
        description="Echo the text back.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="approve",
        description="Decide whether a tool call may run.",
        input_schema={
            "type": "object",
            "properties": {
                "tool_name": {"type": "string"},
                "input": {"type": "object"},
                "tool_use_id": {"type": "string"},
            },
            "required": ["tool_name", "input"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
]


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "echo":
        text = str(args.get("text", ""))
    elif args.get("tool_name") == "Bash":
        text = json.dumps({"behavior": "deny", "message": "the approver refuses shell commands"})
    else:
        text = json.dumps({"behavior": "allow", "updatedInput": args.get("input")})
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server = Server(
        "permission-test", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
