"""Put a workspace's MCP tools into one session's tool pool, and keep them current; the same
for the servers' instructions in the system prompt, and the resource tools.

Each change (a server connects, restarts, lists new tools) re-applies the deferral
policy: when the MCP schemas would take more than the policy's share of the model's
context window, they are all deferred and ``ToolSearch`` joins the core tools; otherwise
they are sent in full and ``ToolSearch`` is not needed. Tools are replaced in place, so
the order the model sees (and the prompt cache) stays stable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tether.mcp.manager import McpManager
from tether.mcp.resource_tools import resource_tools
from tether.tools.pool import DeferralPolicy, ToolPool
from tether.tools.toolsearch import NAME as TOOL_SEARCH
from tether.tools.toolsearch import tool_search_tool

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine


class PoolSync:
    """Mirrors a manager's tools into a pool."""

    def __init__(
        self,
        pool: ToolPool,
        manager: McpManager,
        policy: DeferralPolicy,
        context_window: Callable[[], int],
    ) -> None:
        self.pool = pool
        self.manager = manager
        self.policy = policy
        self.context_window = context_window
        self.names: set[str] = set()
        self.deferred = False
        self._sources: str | None = None

    def __call__(self) -> None:
        tools = self.manager.tools()
        names = {t.name for t in tools}
        for gone in self.names - names:
            self.pool.remove(gone)
        self.names = names
        self.deferred = self.policy.defer(tools, self.context_window())
        for tool in tools:
            self.pool.add(tool, deferred=self.deferred)
        sources = self.manager.summary()
        if self.deferred and (TOOL_SEARCH not in self.pool or sources != self._sources):
            self.pool.add(tool_search_tool(self.pool, sources))
            self._sources = sources
        elif not self.deferred and self._sources is not None:
            self.pool.remove(TOOL_SEARCH)
            self._sources = None


MAX_INSTRUCTIONS = 4000
"""Characters of one server's instructions put in the system prompt."""


def instructions_section(manager: McpManager) -> str:
    found = manager.instructions()
    if not found:
        return ""
    lines = [
        "# MCP server instructions",
        "The connected MCP servers say this about using their tools and resources:",
    ]
    for server, text in found:
        lines += ["", f"## {server}", text.strip()[:MAX_INSTRUCTIONS]]
    return "\n".join(lines)


class InstructionsSync:
    """Keeps the servers' instructions in a session's system prompt; the prompt is rebuilt
    only when they change (a rebuild costs one prompt-cache miss)."""

    def __init__(self, engine: QueryEngine, manager: McpManager) -> None:
        self.engine = engine
        self.manager = manager
        self.section = ""

    def __call__(self) -> None:
        section = instructions_section(self.manager)
        if section == self.section:
            return
        sections = self.engine.assembler.extra_sections
        if self.section in sections:
            sections.remove(self.section)
        if section:
            sections.append(section)
        self.section = section
        self.engine.assembler.invalidate()


def attach(
    engine: QueryEngine, manager: McpManager, policy: DeferralPolicy | None = None
) -> Callable[[], None]:
    """Add ``manager``'s tools and instructions to ``engine`` now and whenever they change;
    returns the function that stops the updates (call it when the session closes)."""
    sync = PoolSync(
        engine.tools, manager, policy or DeferralPolicy(), lambda: engine.provider.context_window
    )
    instructions = InstructionsSync(engine, manager)
    readers = resource_tools(manager)

    def changed() -> None:
        sync()
        instructions()
        # The resource tools cost tokens on every request: offered only when there are any.
        for tool in readers:
            if manager.resources():
                engine.tools.add(tool)
            else:
                engine.tools.remove(tool.name)

    changed()
    return manager.subscribe(changed)
