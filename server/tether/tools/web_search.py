"""WebSearch: the model provider's own web search (Anthropic's ``web_search`` server tool).

The search runs on the provider's side during the response: the request offers the server
tool, and the answer holds ``server_tool_use`` and ``web_search_tool_result`` blocks (kept in
the history verbatim; the API wants them back unchanged) and text with citations. Providers
without it leave the tool out of their requests, so the model is not offered it there.

Permissions: a server-side call cannot be stopped half-way to ask the user, so the decision
is made per request: a bare ``WebSearch`` deny rule removes the tool (as for every tool),
and ``WebSearch(domain:x)`` deny rules become the search's blocked domains. The query goes
only to the provider, which already holds the conversation; nothing runs locally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.providers.base import WebSearchOptions
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool, error_result
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from tether.permissions.rules import Rule

NAME = "WebSearch"
MAX_USES = 8
"""Searches one response may run (Claude Code's cap)."""


class WebSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=2, description="The search query.")
    allowed_domains: list[str] | None = Field(
        default=None, description="Only include results from these domains."
    )
    blocked_domains: list[str] | None = Field(
        default=None, description="Never include results from these domains."
    )


def _domains(rules: list[Rule]) -> tuple[str, ...]:
    return tuple(
        r.spec.removeprefix("domain:")
        for r in rules
        if r.tool == NAME and r.spec is not None and r.spec.startswith("domain:")
    )


def search_options(deny: Callable[[], list[Rule]]) -> WebSearchOptions:
    return WebSearchOptions(max_uses=MAX_USES, blocked_domains=_domains(deny()))


async def _call(_inp: WebSearchInput, _ctx: ToolContext) -> ToolResult:
    return error_result(
        "WebSearch runs on the model provider's side and is not available with this provider."
    )


async def _allow(_inp: WebSearchInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("allow")


def web_search_tool(options: Callable[[], WebSearchOptions]) -> Tool[WebSearchInput]:
    """``options`` is read at each request (rules may change between requests)."""
    return build_tool(
        name=NAME,
        description=prompts.load("tools/WebSearch.md").strip(),
        input_model=WebSearchInput,
        call=_call,
        kind="fetch",
        is_read_only=lambda _inp: True,
        is_concurrency_safe=lambda _inp: True,
        check_permissions=_allow,
        title=lambda inp: f"Web search: {inp.query}",
        server=options,
    )
