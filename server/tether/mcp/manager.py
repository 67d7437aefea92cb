"""The MCP servers of one workspace: one long-lived connection per server, shared by the
workspace's sessions, with a status list for the user and change notifications for the
sessions' tool pools (see ``attach``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import platformdirs

from tether.core.environ import Caller
from tether.mcp.config import McpConfig, NamedServer
from tether.mcp.connection import Backoff, McpConnection, ServerStatus
from tether.mcp.render import MAX_OUTPUT_CHARS
from tether.mcp.tools import McpArguments, wrap_tool
from tether.tools.base import Tool

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class McpOptions:
    connect_timeout: float = 30.0
    """Seconds for a server to start, answer the handshake and list its tools."""
    call_timeout: float | None = None
    """Seconds per tool call; None waits as long as the turn does (cancel stops it)."""
    backoff: Backoff = field(default_factory=Backoff)
    max_output_chars: int = MAX_OUTPUT_CHARS
    log_dir: Path | None = None
    """Where each stdio server's stderr goes (``<name>.log``); a user log dir by default."""
    caller_env: Caller | None = None
    """The warm daemon's client these servers serve: stdio servers get its environment and
    umask, remote servers its proxies, nothing of the daemon's; None: this process's."""
    settings_env: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    """The settings' ``env``: stdio servers get it over the caller's environment."""


def default_log_dir(root: Path) -> Path:
    """Per workspace: two checkouts with the same folder name must not share logs."""
    digest = hashlib.blake2b(str(root).encode(), digest_size=4).hexdigest()
    base = platformdirs.user_log_path("tether", appauthor=False) / "mcp"
    return base / f"{root.name or 'root'}-{digest}"


class McpManager:
    """``start()`` once, ``tools()`` for the pool, ``statuses()`` for the user, ``close()``."""

    def __init__(
        self,
        root: Path,
        config: McpConfig | Sequence[NamedServer],
        options: McpOptions | None = None,
    ) -> None:
        if not isinstance(config, McpConfig):
            config = McpConfig(list(config))
        self.root = root
        self.options = options or McpOptions()
        self.problems = dict(config.problems)
        """Entries that could not be parsed, by name: shown as failed servers."""
        self.log_dir = self.options.log_dir or default_log_dir(root)
        self.connections = {s.name: self._connection(s) for s in config.servers}
        self._started = False
        self._listeners: list[Callable[[], None]] = []
        self._wrapped: dict[str, tuple[list[Any], list[Tool[McpArguments]]]] = {}
        for name, problem in self.problems.items():
            log.warning("MCP server %s not started: %s", name, problem)

    def _connection(self, server: NamedServer) -> McpConnection:
        return McpConnection(
            server,
            cwd=self.root,
            log_dir=self.log_dir,
            backoff=self.options.backoff,
            connect_timeout=self.options.connect_timeout,
            call_timeout=self.options.call_timeout,
            on_change=self._changed,
            caller_env=self.options.caller_env,
            settings_env=self.options.settings_env,
        )

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        """Launch every server in the background; tools appear as servers connect."""
        self._started = True
        for connection in self.connections.values():
            connection.start()

    async def update(self, config: McpConfig) -> None:
        """Apply a new configuration (settings changed, workspace trusted): servers that
        went away or changed are stopped, new ones started; the others keep running."""
        wanted = {s.name: s for s in config.servers}
        stale = [c for n, c in self.connections.items() if n not in wanted or wanted[n] != c.server]
        await asyncio.gather(*(c.close() for c in stale))
        for connection in stale:
            del self.connections[connection.name]
            self._wrapped.pop(connection.name, None)
        for name, server in wanted.items():
            if name not in self.connections:
                self.connections[name] = self._connection(server)
                if self._started:
                    self.connections[name].start()
        self.problems = dict(config.problems)
        self._notify()

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Until every server has connected or failed (or ``timeout`` seconds passed)."""
        waits = [c.wait_settled() for c in self.connections.values()]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), timeout)

    async def restart(self, name: str) -> None:
        await self.connections[name].restart()

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()))
        self._listeners.clear()

    # -- what sessions and the user see ----------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        found = [c.status() for c in self.connections.values()]
        found += [ServerStatus(n, "?", "failed", error=p) for n, p in self.problems.items()]
        return found

    def tools(self) -> list[Tool[Any]]:
        """Tools of every server that has listed them (kept through restarts, so a session
        does not lose them while a crashed server comes back)."""
        out: list[Tool[Any]] = []
        for name, connection in self.connections.items():
            listed = connection.tools
            cached = self._wrapped.get(name)
            if cached is None or cached[0] is not listed:
                wrapped = [
                    wrap_tool(
                        name,
                        t,
                        connection.call_tool,
                        max_chars=self.options.max_output_chars,
                    )
                    for t in listed
                ]
                cached = self._wrapped[name] = (listed, wrapped)
            out += cached[1]
        return out

    def prompts(self) -> list[tuple[str, types.Prompt]]:
        """(server, prompt) for every prompt of a connected server."""
        return [(n, p) for n, c in self.connections.items() for p in c.prompts]

    def resources(self, server: str | None = None) -> list[tuple[str, types.Resource]]:
        return [
            (n, r)
            for n, c in self.connections.items()
            if server is None or n == server
            for r in c.resources
        ]

    def instructions(self) -> list[tuple[str, str]]:
        """(server, text) for every server that sent instructions."""
        return [(n, c.instructions) for n, c in self.connections.items() if c.instructions]

    def connection(self, server: str) -> McpConnection:
        """The server's connection; KeyError names the servers there are."""
        found = self.connections.get(server)
        if found is None:
            names = ", ".join(self.connections) or "none"
            raise KeyError(f"no MCP server named {server!r} (servers: {names})")
        return found

    def summary(self) -> str:
        """``github (45 tools), files (12 tools)``: what deferred tools are about."""
        return ", ".join(
            f"{c.name} ({len(c.tools)} tools)" for c in self.connections.values() if c.tools
        )

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` whenever a server's state or tools change; returns the
        unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def _changed(self, _connection: McpConnection) -> None:
        self._notify()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # one session's bug must not stop the others' updates
                log.exception("MCP change listener failed")
