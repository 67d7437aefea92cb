"""``ListMcpResourcesTool`` and ``ReadMcpResourceTool``: the model's way to MCP servers' resources.

Resources are data a server exposes by URI (files, records, pages). Listing and reading
them changes nothing, so both tools are read-only and run without a question; a server
that is down is an ``is_error`` result naming it.
"""

from __future__ import annotations

import json

import mcp_types as types
from mcp import MCPError
from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.core.messages import ImageBlock, ResultPart, TextBlock
from tether.errors import ToolError
from tether.mcp.manager import McpManager
from tether.mcp.render import MODEL_IMAGE_TYPES
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool

LIST_NAME = "ListMcpResourcesTool"
READ_NAME = "ReadMcpResourceTool"
MAX_RESOURCE_CHARS = 100_000


class ListInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str | None = Field(
        default=None, description="Only this server's resources (all servers when left out)."
    )


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(min_length=1, description="The MCP server that has the resource.")
    uri: str = Field(
        min_length=1, description="The resource's URI, as ListMcpResourcesTool shows it."
    )


def resource_parts(
    server: str, result: types.ReadResourceResult, max_chars: int = MAX_RESOURCE_CHARS
) -> list[ResultPart]:
    """A resource's contents for the model: text as text, images as images."""
    parts: list[ResultPart] = []
    for content in result.contents:
        if isinstance(content, types.TextResourceContents):
            text = content.text
            if len(text) > max_chars:
                text = text[:max_chars] + f"\n[... {len(content.text) - max_chars} more characters]"
            parts.append(
                TextBlock(
                    text=f'<resource server="{server}" uri="{content.uri}">\n{text}\n</resource>'
                )
            )
        elif (content.mime_type or "") in MODEL_IMAGE_TYPES:
            parts.append(ImageBlock(media_type=content.mime_type or "", data=content.blob))
        else:
            kind = content.mime_type or "unknown type"
            parts.append(TextBlock(text=f"[binary resource {content.uri} ({kind})]"))
    return parts or [TextBlock(text=f"(the resource from {server} is empty)")]


async def read_resource(manager: McpManager, server: str, uri: str) -> list[ResultPart]:
    """Raises ToolError with a message for the model (unknown server, server down...)."""
    try:
        connection = manager.connection(server)
    except KeyError as e:
        raise ToolError(str(e.args[0]))
    try:
        result = await connection.read_resource(uri)
    except MCPError as e:
        raise ToolError(f"The MCP server {server} could not read {uri}: {e.error.message}")
    return resource_parts(server, result)


async def _allow(_inp: BaseModel, _ctx: object) -> PermissionCheck:
    return PermissionCheck("allow")


def resource_tools(manager: McpManager) -> list[Tool[ListInput] | Tool[ReadInput]]:
    async def list_call(inp: ListInput, _ctx: object) -> ToolResult:
        if inp.server is not None and inp.server not in manager.connections:
            names = ", ".join(manager.connections) or "none"
            raise ToolError(f"No MCP server named {inp.server}. Servers: {names}")
        found = [
            {
                "server": server,
                "uri": str(r.uri),
                "name": r.name,
                **({"description": r.description} if r.description else {}),
                **({"mimeType": r.mime_type} if r.mime_type else {}),
            }
            for server, r in manager.resources(inp.server)
        ]
        if not found:
            return ToolResult(
                "No resources found. The servers may still offer tools without any resources."
            )
        return ToolResult(json.dumps(found, indent=1, ensure_ascii=False), raw_output=found)

    async def read_call(inp: ReadInput, _ctx: object) -> ToolResult:
        parts = await read_resource(manager, inp.server, inp.uri)
        return ToolResult(parts, raw_output={"server": inp.server, "uri": inp.uri})

    listing: Tool[ListInput] = build_tool(
        name=LIST_NAME,
        description=prompts.load("tools/ListMcpResourcesTool.md").strip(),
        input_model=ListInput,
        call=list_call,
        kind="read",
        is_read_only=lambda _i: True,
        is_concurrency_safe=lambda _i: True,
        check_permissions=_allow,
        title=lambda inp: f"List MCP resources ({inp.server or 'all servers'})",
        rule_content=lambda inp: inp.server,
    )
    reading: Tool[ReadInput] = build_tool(
        name=READ_NAME,
        description=prompts.load("tools/ReadMcpResourceTool.md").strip(),
        input_model=ReadInput,
        call=read_call,
        kind="read",
        is_read_only=lambda _i: True,
        is_concurrency_safe=lambda _i: True,
        check_permissions=_allow,
        title=lambda inp: f"Read {inp.uri} ({inp.server})",
        rule_content=lambda inp: inp.server,
    )
    return [listing, reading]
