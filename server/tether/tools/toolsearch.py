"""ToolSearch: how the model finds deferred tools (tools.pool explains deferral).

The result is a list of references (``<tool-reference name="..."/>`` plus one line of
description), never schemas: the pool sees the references in the history and sends the
full definitions of those tools with the next request. Two query forms:

    select:mcp__github__create_issue,mcp__github__list_issues   load by exact name
    github issue +create                                        rank by keywords; ``+word``
                                                                 must appear in the name

Ranking is plain keyword scoring over name parts and description words: cheap, stable and
explainable, which is what a model choosing tools needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.tools.pool import ToolPool, reference

NAME = "ToolSearch"
_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")


class ToolSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        description='Keywords ("github create issue"), or "select:Name1,Name2" to load '
        "tools by exact name. Prefix a keyword with + to require it in the tool name.",
    )
    max_results: int = Field(default=5, ge=1, le=50, description="How many tools to return.")


def name_words(name: str) -> list[str]:
    """``mcp__github__createIssue`` -> ["mcp", "github", "create", "issue"]."""
    return _WORD.findall(_CAMEL.sub(r"\1 \2", name).lower())


def stem(word: str) -> str:
    """Plural to singular, roughly: "issues" finds "create_issue"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def score(tool: Tool[Any], terms: list[str], required: list[str]) -> int:
    name = tool.name.lower()
    if any(r not in name for r in required):
        return 0
    parts = [stem(w) for w in name_words(tool.name)]
    server, own = (parts[1], parts[2:]) if parts[:1] == ["mcp"] and len(parts) > 2 else ("", parts)
    description = tool.description.lower()
    words = {stem(w) for w in _WORD.findall(description)}
    total = 0
    for raw in terms:
        term = stem(raw)
        if raw == name:
            total += 100
        elif term in own:
            total += 10
        elif term == server:
            total += 4
        elif raw in name:
            total += 5
        if term in words:
            total += 2
        elif raw in description:
            total += 1
    return total


def rank(tools: Iterable[Tool[Any]], query: str, limit: int) -> list[Tool[Any]]:
    raw = query.lower().split()
    required = [w[1:] for w in raw if w.startswith("+") and len(w) > 1]
    terms = [t for w in raw for t in _WORD.findall(w.lstrip("+"))] or required
    scored = [(score(t, terms, required), t.name, t) for t in tools]
    hits = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [t for _, _, t in hits[:limit]]


def select(pool: ToolPool, names: list[str]) -> tuple[list[Tool[Any]], list[str], list[str]]:
    """Deferred tools by name (an MCP tool also by its own short name when unambiguous);
    returns (found, already loaded core tools, unknown names)."""
    found: list[Tool[Any]] = []
    core: list[str] = []
    unknown: list[str] = []
    deferred = pool.deferred
    for wanted in names:
        tool = pool.get(wanted)
        if tool is None:
            matches = [t for t in deferred if t.name.endswith(f"__{wanted}")]
            tool = matches[0] if len(matches) == 1 else None
        if tool is None:
            unknown.append(wanted)
        elif pool.is_deferred(tool.name):
            found.append(tool)
        else:
            core.append(tool.name)
    return found, core, unknown


def _line(tool: Tool[Any]) -> str:
    first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
    return f"{reference(tool.name)} {first[:160]}".rstrip()


def render(found: list[Tool[Any]], core: list[str], unknown: list[str], total: int) -> str:
    lines: list[str] = []
    if found:
        lines.append(
            f"{len(found)} tool(s) found; you can call them from your next step on, "
            "with their full definitions:"
        )
        lines += [_line(t) for t in found]
    if core:
        lines.append("Already available (no need to load): " + ", ".join(core))
    if unknown:
        lines.append("No tool with these names: " + ", ".join(unknown))
    if not found and not core:
        lines.append(
            f"No deferred tool matches (there are {total}). Try other keywords, fewer words, "
            "or the server's name."
        )
    return "\n".join(lines)


def tool_search_tool(pool: ToolPool, sources: str = "") -> Tool[ToolSearchInput]:
    """The ToolSearch tool for ``pool``. ``sources`` (e.g. "github (45 tools)") tells the
    model what kind of tools are waiting to be found."""

    async def call(inp: ToolSearchInput, _ctx: ToolContext) -> ToolResult:
        query = inp.query.strip()
        if query.lower().startswith("select:"):
            names = [n.strip() for n in query[len("select:") :].split(",") if n.strip()]
            found, core, unknown = select(pool, names)
        else:
            found, core, unknown = rank(pool.deferred, query, inp.max_results), [], []
        text = render(found, core, unknown, len(pool.deferred))
        return ToolResult(text, raw_output={"matches": [t.name for t in found]})

    async def allow(_inp: ToolSearchInput, _ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck("allow")

    description = prompts.load("tools/ToolSearch.md").strip()
    if sources:
        description += f"\n\nDeferred tools come from: {sources}."
    return build_tool(
        name=NAME,
        description=description,
        input_model=ToolSearchInput,
        call=call,
        kind="search",
        is_read_only=lambda _i: True,
        is_concurrency_safe=lambda _i: True,
        check_permissions=allow,
        title=lambda inp: f"Search tools: {inp.query}",
    )
