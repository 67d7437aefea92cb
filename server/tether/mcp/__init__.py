"""MCP client: servers from ``.mcp.json`` and settings, their tools in the session's pool.

    manager = McpManager(root, load_config(root, settings.mcp_servers, project_file=trusted))
    manager.start()                    # one long-lived client per server, per workspace
    detach = tether.mcp.attach.attach(engine, manager)   # per session: into engine.tools
    ...
    detach(); await manager.close()

Error planes: a server that cannot start or crashes is a *status* (``statuses()``, logged)
and never an exception in the session; a tool call to a server that is down, or one the
server rejects or marks ``isError``, is an ``is_error`` tool result the model can act on;
only programmer errors raise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.mcp.config import McpConfig, NamedServer, load_config, parse_server
    from tether.mcp.connection import Backoff, ServerStatus
    from tether.mcp.manager import McpManager, McpOptions

__all__ = [
    "Backoff",
    "McpConfig",
    "McpManager",
    "McpOptions",
    "NamedServer",
    "ServerStatus",
    "load_config",
    "parse_server",
]

_HOMES = {
    "McpConfig": "tether.mcp.config",
    "NamedServer": "tether.mcp.config",
    "load_config": "tether.mcp.config",
    "parse_server": "tether.mcp.config",
    "Backoff": "tether.mcp.connection",
    "ServerStatus": "tether.mcp.connection",
    "McpManager": "tether.mcp.manager",
    "McpOptions": "tether.mcp.manager",
}


def __getattr__(name: str) -> Any:
    # The MCP SDK costs ~0.4 s to import: only a workspace with servers pays for it.
    import importlib

    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(home), name)
