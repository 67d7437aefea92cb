"""MCP client: servers from ``.mcp.json`` and settings, their tools in the session's pool.

    manager = McpManager(root, load_config(root, settings.mcp_servers, project_file=trusted))
    manager.start()                    # one long-lived client per server, per workspace
    detach = attach(engine, manager)   # per session: tools into engine.tools (maybe deferred)
    ...
    detach(); await manager.close()

Error planes: a server that cannot start or crashes is a *status* (``statuses()``, logged)
and never an exception in the session; a tool call to a server that is down, or one the
server rejects or marks ``isError``, is an ``is_error`` tool result the model can act on;
only programmer errors raise.
"""

from tether.mcp.attach import attach
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
    "attach",
    "load_config",
    "parse_server",
]
