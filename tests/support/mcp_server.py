"""A test MCP server written with the official SDK: 150 generated tools plus a few special
ones, over stdio (default) or streamable HTTP (``--http PORT``).

``--generated-only`` serves just the 150 generated tools (the benchmark's set).

Generated tools are ``<service>_<action>`` for 15 services x 10 actions, with realistic
schemas (four parameters with descriptions). ``get``, ``list``, ``search`` and ``export``
are read-only (``readOnlyHint``), the others are not. Special tools:

    echo(text)         read-only, returns the text
    write_note(text)   not read-only, returns "saved: <text>"
    fail(reason)       answers with isError
    image()            returns a 1x1 PNG
    structured(n)      returns structured content only
    crash()            kills the server process (tests restart-on-crash)
    pid()              the server's process id (read-only)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SERVICES = [
    "calendar",
    "crm",
    "docs",
    "email",
    "files",
    "git",
    "issues",
    "kanban",
    "logs",
    "metrics",
    "notes",
    "payments",
    "search",
    "slack",
    "weather",
]
ACTIONS = {
    "create": "Create a new {s} item with the given fields and return its id.",
    "delete": "Delete a {s} item by id. The deletion cannot be undone.",
    "get": "Fetch one {s} item by id, with all of its fields.",
    "list": "List {s} items, newest first, optionally filtered by a query.",
    "update": "Update fields of an existing {s} item by id.",
    "archive": "Archive a {s} item so it no longer shows in lists.",
    "export": "Export {s} items as CSV or JSON for reporting.",
    "import": "Import {s} items from a CSV or JSON document.",
    "search": "Full-text search across {s} items, ranked by relevance.",
    "share": "Share a {s} item with another user or team.",
}
READ_ONLY = {"get", "list", "search", "export"}
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _generated(service: str, action: str) -> types.Tool:
    return types.Tool(
        name=f"{service}_{action}",
        description=ACTIONS[action].format(s=service),
        input_schema={
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": f"The {service} item id."},
                "query": {"type": "string", "description": "Free-text filter or search query."},
                "fields": {
                    "type": "object",
                    "description": "Field values to set, by field name.",
                    "additionalProperties": {"type": "string"},
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "description": "At most this many results.",
                },
            },
            "required": ["id"] if action in {"get", "delete", "update", "archive"} else [],
        },
        annotations=types.ToolAnnotations(read_only_hint=action in READ_ONLY),
    )


def _special() -> list[types.Tool]:
    def tool(name: str, description: str, props: dict[str, Any], read_only: bool) -> types.Tool:
        return types.Tool(
            name=name,
            description=description,
            input_schema={"type": "object", "properties": props, "required": list(props)},
            annotations=types.ToolAnnotations(read_only_hint=read_only),
        )

    text = {"text": {"type": "string"}}
    return [
        tool("echo", "Echo the text back.", text, True),
        tool("write_note", "Save a note.", text, False),
        tool("fail", "Always fails with the given reason.", {"reason": {"type": "string"}}, True),
        tool("image", "Return a tiny PNG image.", {}, True),
        tool(
            "structured",
            "Return n squared as structured content.",
            {"n": {"type": "integer"}},
            True,
        ),
        tool("crash", "Kill the server process.", {}, False),
        tool("pid", "The server's process id.", {}, True),
    ]


GENERATED = [_generated(s, a) for s in SERVICES for a in ACTIONS]
TOOLS = GENERATED + _special()


def _text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=GENERATED if "--generated-only" in sys.argv else TOOLS)


async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return _text(str(args.get("text", "")))
    if name == "write_note":
        return _text(f"saved: {args.get('text', '')}")
    if name == "fail":
        return types.CallToolResult(
            content=[types.TextContent(text=f"failed: {args.get('reason', '')}")], is_error=True
        )
    if name == "image":
        return types.CallToolResult(
            content=[types.ImageContent(data=PNG_1X1, mime_type="image/png")]
        )
    if name == "structured":
        n = int(args.get("n", 0))
        return types.CallToolResult(content=[], structured_content={"square": n * n})
    if name == "crash":
        sys.stderr.write("crashing on request\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "pid":
        return _text(str(os.getpid()))
    return _text(f"{name} ok: {json.dumps(args, sort_keys=True)}")


def build_server() -> Server[Any]:
    return Server("tether-test", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _stdio() -> None:
    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, help="serve streamable HTTP on this port")
    parser.add_argument("--generated-only", action="store_true", help="list the 150 only")
    args = parser.parse_args()
    if args.http is None:
        anyio.run(_stdio)
        return
    import uvicorn

    app = build_server().streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
