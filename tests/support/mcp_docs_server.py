"""An MCP server built with the SDK's ``MCPServer``, served over streamable HTTP on a thread:
instructions, a resource, a prompt, a tool that adds another tool (and says the tool list
changed), and an API key every request must carry in ``X-Api-Key``."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

INSTRUCTIONS = "Docs server: read the handbook resource before answering questions about widgets."
HANDBOOK = "# Handbook\nWidgets spin at 42 rpm."


def build(key: str, seen: list[str]) -> Any:
    mcp = MCPServer("docs", instructions=INSTRUCTIONS)

    @mcp.resource(
        "docs://handbook",
        name="handbook",
        description="The team handbook.",
        mime_type="text/markdown",
    )
    def handbook() -> str:
        return HANDBOOK

    @mcp.prompt(name="review", description="Review a topic of the widget docs.")
    def review(topic: str) -> str:
        return f"Review the widget docs about {topic} and list open questions."

    def secret() -> str:
        """The secret number."""
        return "the secret is 7"

    @mcp.tool(description="Unlock the secret tool.")
    async def unlock(ctx: Context) -> str:
        mcp.add_tool(secret, name="secret")
        await ctx.notify_tools_changed()
        return "unlocked"

    app = mcp.streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"x-api-key", b"").decode()
            seen.append(given)
            if given != key:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"bad key"})
                return
        await app(scope, receive, send)

    return guarded


class DocsServer:
    def __init__(self, port: int, key: str) -> None:
        self.seen_keys: list[str] = []
        config = uvicorn.Config(
            build(key, self.seen_keys), host="127.0.0.1", port=port, log_level="error"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{port}/mcp"

    def __enter__(self) -> DocsServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("the MCP docs server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
