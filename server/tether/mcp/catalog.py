"""What one MCP server offers (tools, prompts, resources, instructions), listed in full
(paginated), and how we learn that it changed.

Change notices arrive two ways, depending on the protocol version the connection settled
on: servers on the 2026-07-28 protocol send them only on a ``subscriptions/listen`` stream
the client opens; older servers send ``notifications/*/list_changed`` on the connection
(seen by the client's message handler). ``watch_changes`` covers the first; the connection's
message handler the second. Either way the kinds that changed are reported, and the
connection lists them again, bypassing the SDK's response cache.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

log = logging.getLogger(__name__)

Kind = Literal["tools", "prompts", "resources"]
_PAGE_CAP = 100


@dataclass
class Catalog:
    tools: list[types.Tool] = field(default_factory=lambda: list[types.Tool]())
    prompts: list[types.Prompt] = field(default_factory=lambda: list[types.Prompt]())
    resources: list[types.Resource] = field(default_factory=lambda: list[types.Resource]())
    instructions: str | None = None


def offers(client: Client, kind: Kind) -> bool:
    caps = client.server_capabilities
    return getattr(caps, kind) is not None


async def list_kind(client: Client, kind: Kind, *, fresh: bool = False) -> list[Any]:
    """Every item of ``kind`` the server offers (all pages); [] when it offers none."""
    if kind != "tools" and not offers(client, kind):
        return []
    mode = "refresh" if fresh else "use"
    found: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGE_CAP):
        if kind == "tools":
            page: Any = await client.list_tools(cursor=cursor, cache_mode=mode)
            found += page.tools
        elif kind == "prompts":
            page = await client.list_prompts(cursor=cursor, cache_mode=mode)
            found += page.prompts
        else:
            page = await client.list_resources(cursor=cursor, cache_mode=mode)
            found += page.resources
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


async def load_catalog(client: Client) -> Catalog:
    return Catalog(
        tools=await list_kind(client, "tools"),
        prompts=await list_kind(client, "prompts"),
        resources=await list_kind(client, "resources"),
        instructions=client.instructions,
    )


def changed_kind(message: Any) -> Kind | None:
    """The kind a legacy ``list_changed`` notification is about, if it is one."""
    if isinstance(message, types.ToolListChangedNotification):
        return "tools"
    if isinstance(message, types.PromptListChangedNotification):
        return "prompts"
    if isinstance(message, types.ResourceListChangedNotification):
        return "resources"
    return None


async def watch_changes(client: Client, changed: Callable[[Kind], None]) -> None:
    """Report changes from a ``subscriptions/listen`` stream until it ends. Returns at once
    on a connection whose protocol has no such stream (its notices come the legacy way)."""
    try:
        async with client.listen(
            tools_list_changed=True,
            prompts_list_changed=offers(client, "prompts"),
            resources_list_changed=offers(client, "resources"),
        ) as subscription:
            async for event in subscription:
                if isinstance(event, ToolsListChanged):
                    changed("tools")
                elif isinstance(event, PromptsListChanged):
                    changed("prompts")
                elif isinstance(event, ResourcesListChanged):
                    changed("resources")
    except ListenNotSupportedError:
        return
    except SubscriptionLost as e:
        log.info("MCP change stream ended: %s", e)
