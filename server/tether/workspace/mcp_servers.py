"""A workspace's MCP servers, one set per caller.

In-process there is one caller, this process. The warm daemon serves several, and a stdio
server runs in the world of the caller whose session needs it (its environment and umask;
``${VAR}`` in the configuration is the caller's variable), so each caller gets a set of its
own, started with its first session there and stopped when its last one closes: a daemon
serving many callers for days keeps only the servers someone uses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.core.environ import Caller
from tether.engine.engine import QueryEngine
from tether.errors import SessionError
from tether.mcp.config import McpConfig

if TYPE_CHECKING:
    from mcp_types import CallToolResult

    from tether.mcp.connection import ServerStatus
    from tether.mcp.manager import McpManager
    from tether.skills.expand import McpPrompts

log = logging.getLogger(__name__)

CallerKey = tuple[tuple[tuple[str, str], ...], int | None] | None


def caller_key(caller: Caller | None) -> CallerKey:
    return None if caller is None else caller.key


class CallerServers:
    def __init__(
        self,
        root: Path,
        load_config: Callable[[Caller | None], McpConfig],
        settings_env: Callable[[], Mapping[str, str]],
    ) -> None:
        """``load_config``: the workspace's MCP configuration as ``caller`` sees it;
        ``settings_env``: the settings' ``env``, which stdio servers get on top."""
        self._root = root
        self._load_config = load_config
        self._settings_env = settings_env
        self._managers: dict[CallerKey, McpManager] = {}
        self._configs: dict[CallerKey, McpConfig] = {}
        self._users: dict[CallerKey, set[str]] = {}
        """The sessions using each caller's servers."""
        self._detach: dict[str, tuple[CallerKey, Callable[[], None]]] = {}

    def attach(self, engine: QueryEngine, caller: Caller | None) -> None:
        """Give a session the MCP tools of its caller's servers (started on first use)."""
        key = caller_key(caller)
        config = self._configs.get(key)
        if config is None:
            config = self._configs[key] = self._load_config(caller)
            for name, problem in config.problems.items():
                log.warning("MCP server %s skipped: %s", name, problem)
        if not config.servers:
            return
        from tether.mcp.attach import attach
        from tether.mcp.manager import McpManager, McpOptions

        manager = self._managers.get(key)
        if manager is None:
            options = McpOptions(caller_env=caller, settings_env=dict(self._settings_env()))
            manager = self._managers[key] = McpManager(self._root, config, options)
            manager.start()
        self._detach[engine.session_id] = (key, attach(engine, manager))
        self._users.setdefault(key, set()).add(engine.session_id)

    async def replace(
        self, engine: QueryEngine, caller: Caller | None, names: set[str]
    ) -> dict[str, str]:
        """The configuration changed while ``engine``'s session runs (an SDK program's
        ``mcp_set_servers``): reload it for ``caller``, update or start its servers and
        return, by name among ``names``, those that could not start."""
        key = caller_key(caller)
        config = self._configs[key] = self._load_config(caller)
        manager = self._managers.get(key)
        if manager is not None:
            await manager.update(config)
        elif config.servers:
            self.attach(engine, caller)
            manager = self._managers.get(key)
        if manager is not None:
            await manager.wait_ready(timeout=10.0)
        problems = {n: p for n, p in config.problems.items() if n in names}
        for status in manager.statuses() if manager is not None else []:
            if status.name in names and status.error:
                problems.setdefault(status.name, status.error)
        return problems

    async def restart(self, name: str, caller: Caller | None) -> None:
        """Start one of ``caller``'s servers again; ``KeyError`` names the servers there are."""
        manager = self.manager(caller)
        if manager is None:
            raise KeyError(f"no MCP server named {name!r} (no servers run)")
        manager.connection(name)
        await manager.restart(name)

    async def release(self, session_id: str) -> None:
        """A session closed (or moved to another caller): take its MCP tools away; the
        servers of a caller of the warm daemon stop with the last session using them
        (in-process they live as long as the workspace)."""
        found = self._detach.pop(session_id, None)
        if found is None:
            return
        key, detach = found
        detach()
        users = self._users.get(key, set())
        users.discard(session_id)
        if users or key is None:
            return
        self._users.pop(key, None)
        self._configs.pop(key, None)
        manager = self._managers.pop(key, None)
        if manager is not None:
            await manager.close()

    def manager(self, caller: Caller | None) -> McpManager | None:
        return self._managers.get(caller_key(caller))

    def prompts(self, caller: Caller | None) -> McpPrompts | None:
        manager = self.manager(caller)
        if manager is None:
            return None
        from tether.mcp.commands import McpPromptSource

        return McpPromptSource(manager)

    async def ready(self, caller: Caller | None, timeout: float) -> list[str]:
        manager = self.manager(caller)
        if manager is None:
            return []
        await manager.wait_ready(timeout=timeout)
        return [f"MCP server {s.name}: {s.error}" for s in manager.statuses() if s.error]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None
    ) -> CallToolResult:
        from tether.mcp.tools import mcp_tool_name

        manager = self.manager(caller)
        if manager is not None:
            await manager.wait_ready(timeout=10.0)
            for server, connection in manager.connections.items():
                for tool in connection.tools:
                    if mcp_tool_name(server, tool.name) == name:
                        return await connection.call_tool(tool.name, arguments)
        raise SessionError(f"no MCP server offers the tool {name}")

    def statuses(self, caller: Caller | None) -> list[ServerStatus]:
        manager = self.manager(caller)
        return manager.statuses() if manager is not None else []

    async def close(self) -> None:
        for manager in self._managers.values():
            await manager.close()
        self._managers.clear()
        self._configs.clear()
        self._users.clear()
