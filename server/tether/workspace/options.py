"""What a front door asks of a session (``SessionOptions``) and how a workspace makes
providers (``ProviderFactory``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.agents.definitions import AgentDefinition
from tether.core.environ import Caller
from tether.core.hooks import Hooks
from tether.engine.turns import AttachmentSource
from tether.protocol.updates import Mode
from tether.providers.base import Provider
from tether.tools.base import Tool

ProviderFactory = Callable[[str | None, Path], Provider]


@dataclass(frozen=True)
class SessionOptions:
    """How a front door wants a session: the model, the mode, limits and extra rules (the
    command line's ``--allowedTools``...), and what it adds at turn boundaries."""

    session_id: str | None = None
    """For a new session: its id (default: a fresh UUID)."""
    model: str | None = None
    mode: Mode | None = None
    """The mode to start in (a resumed session too)."""
    default_mode: Mode | None = None
    """The mode when nothing else says: a resumed session keeps the mode it was left in."""
    title: str | None = None
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    max_turns: int | None = None
    max_budget_usd: float | None = None
    auto_wake: bool = True
    """Answer finished background tasks with a turn of their own while idle."""
    attachments: Sequence[AttachmentSource] = ()
    """Sources of urgent context at turn boundaries (the LSP door's new diagnostics)."""
    hooks: Hooks | None = None
    """Hooks of the front door's own (an SDK program's callbacks), asked along with the
    settings' command hooks."""
    tools: Sequence[Tool[Any]] = ()
    """Tools the front door brings (MCP servers hosted by an SDK program)."""
    builtin_tools: Sequence[str] | None = None
    """Which built-in tools the model gets (``--tools``); None: all of them."""
    system_prompt: str | None = None
    """Replaces the built-in identity section of the system prompt (blank: keep it)."""
    append_system_prompt: str | None = None
    """Added at the end of the system prompt."""
    agents: Mapping[str, AgentDefinition] = field(
        default_factory=lambda: dict[str, AgentDefinition]()
    )
    """Subagent definitions the front door brings (an SDK program's), over the workspace's."""
    caller: Caller | None = None
    """Whom the session works for (the warm daemon's client: its environment, keys, base
    URLs, proxies, umask); None: this process."""
