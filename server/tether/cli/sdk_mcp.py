"""MCP servers that live inside the SDK program (``createSdkMcpServer`` /
``create_sdk_mcp_server``).

A program announces them in one of two ways: as ``{"type": "sdk", "name": ...}`` entries of
``--mcp-config`` (the Python SDK), or by name in ``initialize.sdkMcpServers`` (the
TypeScript SDK), often with ``sdkMcpServerManifests``: each server's own ``initialize`` and
``tools/list`` results, captured by the program, so the handshake needs no round trip. Their
messages travel as ``mcp_message`` control requests: we send a JSON-RPC message, the program
hands it to its in-process server and answers with ``{"mcp_response": ...}``; the program
sends us its server's own messages (``notifications/tools/list_changed``) the same way.

This client does the handshake (``initialize``, ``notifications/initialized``) unless a
usable manifest stands in for it, lists the tools and calls them; the tools then enter the
session like any MCP server's (``tether.mcp.tools.wrap_tool``: same names, permission rules,
hooks and rendering).
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

import mcp_types
from mcp import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from tether import __version__
from tether.cli.control import ControlChannel, ControlError
from tether.cli.driver import HostedServer
from tether.cli.sdk_wire import SdkManifest

LIST_PAGES = 20
PROTOCOL_VERSION = HANDSHAKE_PROTOCOL_VERSIONS[-1]
"""The newest revision with an ``initialize`` handshake (later ones have none)."""
MIN_TIMEOUT_MS = 1000
"""A per-server call timeout below this is ignored, as Claude Code ignores it."""
ManifestUse = Literal["parked", "protocol_version_mismatch", "malformed"]
"""What became of a manifest (the values ``sdk_mcp_manifests_parked`` reports)."""


def read_manifest(raw: Any) -> SdkManifest | None:
    try:
        return SdkManifest.model_validate(raw)
    except ValidationError:
        return None


class HostedMcpClient:
    """One in-process server of the program, reached over the control channel."""

    def __init__(
        self,
        name: str,
        channel: ControlChannel,
        *,
        timeout_ms: float | None = None,
        manifest: SdkManifest | None = None,
    ) -> None:
        self.name = name
        self._channel = channel
        self._ids = itertools.count()
        self._timeout = timeout_ms / 1000 if timeout_ms and timeout_ms >= MIN_TIMEOUT_MS else None
        self._manifest = manifest
        self.server_info: dict[str, Any] | None = None
        self.tools: list[mcp_types.Tool] = []
        self.error: str | None = None

    @property
    def manifest_use(self) -> ManifestUse | None:
        """None when no manifest came; else whether it can stand in for the handshake."""
        if self._manifest is None:
            return None
        version = self._manifest.initialize_result.get("protocolVersion")
        if version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return "protocol_version_mismatch"
        return "parked"

    async def _send(self, message: dict[str, Any]) -> dict[str, Any]:
        body = {"subtype": "mcp_message", "server_name": self.name, "message": message}
        answer = await self._channel.request(body, timeout=self._timeout)
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
        manifest = self._manifest if self.manifest_use == "parked" else None
        self._manifest = None  # a manifest serves the first connect only
        try:
            if manifest is not None:
                result = mcp_types.InitializeResult.model_validate(manifest.initialize_result)
            else:
                result = mcp_types.InitializeResult.model_validate(
                    await self._call(
                        "initialize",
                        {
                            "protocolVersion": PROTOCOL_VERSION,
                            "capabilities": {},
                            "clientInfo": {"name": "tether", "version": __version__},
                        },
                    )
                )
                await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            self.server_info = result.server_info.model_dump(mode="json", exclude_none=True)
            listed = manifest.tools_list_result if manifest is not None else None
            self.tools = await self._list_tools(listed)
        except (MCPError, ValidationError, ControlError) as e:
            self.error = f"the SDK MCP server {self.name} did not start: {e}"
            raise ControlError(self.error) from e
        self.error = None
        return self.hosted()

    def hosted(self) -> HostedServer:
        return HostedServer(self.name, list(self.tools), self.call_tool)

    async def _list_tools(self, first_page: dict[str, Any] | None) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(LIST_PAGES):
            raw = first_page if first_page is not None and cursor is None else None
            if raw is None:
                raw = await self._call("tools/list", {"cursor": cursor} if cursor else None)
            page = mcp_types.ListToolsResult.model_validate(raw)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def relist(self) -> HostedServer:
        """The server said its tools changed: list them again."""
        try:
            self.tools = await self._list_tools(None)
        except (MCPError, ValidationError, ControlError) as e:
            raise ControlError(f"the SDK MCP server {self.name} could not list its tools: {e}")
        return self.hosted()

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        try:
            result = await self._call("tools/call", {"name": tool, "arguments": arguments})
        except ControlError as e:
            raise MCPError(code=-32603, message=str(e)) from e
        return mcp_types.CallToolResult.model_validate(result)
