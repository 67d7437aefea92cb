"""MCP servers that live inside the SDK program (``create_sdk_mcp_server``).

The program lists them in ``--mcp-config`` as ``{"type": "sdk", "name": ...}``; their
messages travel as ``mcp_message`` control requests: we send a JSON-RPC message, the
program hands it to its in-process server and answers with ``{"mcp_response": ...}``. This
client does the handshake (``initialize``, ``notifications/initialized``), lists the tools
and calls them; the tools then enter the session like any MCP server's
(``tether.mcp.tools.wrap_tool``: same names, permission rules, hooks and rendering).
"""

from __future__ import annotations

import itertools
from typing import Any

import mcp_types
from mcp import MCPError
from pydantic import ValidationError

from tether import __version__
from tether.cli.control import ControlChannel, ControlError
from tether.cli.driver import HostedServer

LIST_PAGES = 20


class HostedMcpClient:
    """One in-process server of the program, reached over the control channel."""

    def __init__(self, name: str, channel: ControlChannel) -> None:
        self.name = name
        self._channel = channel
        self._ids = itertools.count()

    async def _send(self, message: dict[str, Any]) -> dict[str, Any]:
        body = {"subtype": "mcp_message", "server_name": self.name, "message": message}
        answer = await self._channel.request(body)
        response: Any = answer.get("mcp_response")
        return response if isinstance(response, dict) else {}  # pyright: ignore[reportUnknownVariableType]

    async def _call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        response = await self._send(message)
        error: Any = response.get("error")
        if isinstance(error, dict):
            raise MCPError(
                code=int(error.get("code", -32603)),  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
                message=str(error.get("message", "error")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            )
        result: Any = response.get("result")
        return result if isinstance(result, dict) else {}  # pyright: ignore[reportUnknownVariableType]

    async def connect(self) -> HostedServer:
        """Handshake and list the tools; raises ``ControlError`` naming the server."""
        try:
            await self._call(
                "initialize",
                {
                    "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "tether", "version": __version__},
                },
            )
            await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools: list[mcp_types.Tool] = []
            cursor: str | None = None
            for _ in range(LIST_PAGES):
                page = mcp_types.ListToolsResult.model_validate(
                    await self._call("tools/list", {"cursor": cursor} if cursor else None)
                )
                tools += page.tools
                cursor = page.next_cursor
                if cursor is None:
                    break
        except (MCPError, ValidationError, ControlError) as e:
            raise ControlError(f"the SDK MCP server {self.name} did not start: {e}") from e
        return HostedServer(self.name, tools, self.call_tool)

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        try:
            result = await self._call("tools/call", {"name": tool, "arguments": arguments})
        except ControlError as e:
            raise MCPError(code=-32603, message=str(e)) from e
        return mcp_types.CallToolResult.model_validate(result)
