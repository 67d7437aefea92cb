"""Deferred tools: the pool's policy and discovery scan, and ToolSearch's ranking."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp_types as types

from tether.core.messages import Message, TextBlock, ToolResultBlock
from tether.mcp.tools import wrap_tool
from tether.tools.base import Tool
from tether.tools.pool import DeferralPolicy, ToolPool, reference, schema_bytes
from tether.tools.registry import core_tools
from tether.tools.toolsearch import ToolSearchInput, name_words, rank, tool_search_tool


async def _never(_name: str, _args: dict[str, Any]) -> types.CallToolResult:
    raise AssertionError("not called")


def mcp_tool(name: str, description: str, server: str = "s") -> Tool[Any]:
    raw = types.Tool(name=name, description=description, input_schema={"type": "object"})
    return wrap_tool(server, raw, _never)


TOOLS = [
    mcp_tool("create_issue", "Create a GitHub issue in a repository.", "github"),
    mcp_tool("list_issues", "List issues of a repository.", "github"),
    mcp_tool("send_message", "Send a message to a Slack channel.", "slack"),
    mcp_tool("listChannels", "List the Slack channels you can see.", "slack"),
    mcp_tool("get_forecast", "Weather forecast for a city.", "weather"),
]


def result_message(text: str) -> Message:
    return Message(
        role="user", content=[ToolResultBlock(tool_use_id="t", content=[TextBlock(text=text)])]
    )


def test_add_moves_a_tool_between_core_and_deferred() -> None:
    pool = ToolPool(core_tools())
    tool = TOOLS[0]
    pool.add(tool, deferred=True)
    assert pool.is_deferred(tool.name) and tool.name not in [t.name for t in pool.core]
    pool.add(tool)
    assert not pool.is_deferred(tool.name) and pool.core[-1] is tool
    assert [t.name for t in pool.deferred] == []


def test_only_discovered_deferred_tools_are_specified() -> None:
    pool = ToolPool(core_tools())
    for tool in TOOLS:
        pool.add(tool, deferred=True)
    core = [s.name for s in pool.specs([])]
    history = [result_message(reference("mcp__slack__send_message") + " Send a message")]
    assert [s.name for s in pool.specs(history)] == [*core, "mcp__slack__send_message"]
    # Incremental: a later reference in the same list is found; compaction (a new list)
    # keeps what was discovered.
    history.append(result_message(reference("mcp__weather__get_forecast")))
    assert [s.name for s in pool.specs(history)][-2:] == [
        "mcp__slack__send_message",
        "mcp__weather__get_forecast",
    ]
    assert len(pool.specs([])) == len(core) + 2


def test_deferral_policy_compares_schema_size_with_the_window() -> None:
    size = schema_bytes(TOOLS)
    assert size > 0
    policy = DeferralPolicy(share=0.05)
    assert not policy.defer(TOOLS, context_window=200_000)
    assert policy.defer(TOOLS, context_window=int(size / 4 / 0.05) - 1)
    assert DeferralPolicy(mode="always").defer(TOOLS, 200_000)
    assert not DeferralPolicy(mode="always").defer([], 200_000)
    assert not DeferralPolicy(mode="never").defer(TOOLS, 1)


def test_name_words_split_servers_snake_and_camel_case() -> None:
    assert name_words("mcp__slack__listChannels") == ["mcp", "slack", "list", "channels"]


def test_rank_prefers_name_matches_and_honours_required_words() -> None:
    assert next(t.name for t in rank(TOOLS, "slack message", 5)) == "mcp__slack__send_message"
    assert {t.name for t in rank(TOOLS, "issues", 5)} == {
        "mcp__github__list_issues",
        "mcp__github__create_issue",
    }
    # "+list": only tools with "list" in the name, however well the rest matches.
    assert [t.name for t in rank(TOOLS, "+list slack", 5)] == [
        "mcp__slack__listChannels",
        "mcp__github__list_issues",
    ]
    assert [t.name for t in rank(TOOLS, "forecast city", 1)] == ["mcp__weather__get_forecast"]
    assert rank(TOOLS, "kubernetes", 5) == []


def run_search(pool: ToolPool, query: str, limit: int = 5) -> str:
    tool = tool_search_tool(pool, "github (2 tools)")
    assert "github (2 tools)" in tool.description
    result = asyncio.run(tool.call(ToolSearchInput(query=query, max_results=limit), None))  # type: ignore[arg-type]
    assert isinstance(result.content, str)
    return result.content


def test_tool_search_returns_references_not_schemas() -> None:
    pool = ToolPool(core_tools())
    for tool in TOOLS:
        pool.add(tool, deferred=True)
    text = run_search(pool, "github issue")
    assert reference("mcp__github__create_issue") in text
    assert "Create a GitHub issue" in text and "input_schema" not in text
    selected = run_search(pool, "select:mcp__slack__send_message, get_forecast, Read, nope")
    assert reference("mcp__slack__send_message") in selected
    assert reference("mcp__weather__get_forecast") in selected  # by its short name
    assert "Already available (no need to load): Read" in selected
    assert "No tool with these names: nope" in selected
    assert "No deferred tool matches (there are 5)" in run_search(pool, "kubernetes")


def test_tool_search_is_read_only_and_allowed(tmp_path: Path) -> None:
    tool = tool_search_tool(ToolPool([]))
    inp = ToolSearchInput(query="x")
    assert tool.is_read_only(inp) and tool.is_concurrency_safe(inp)
    check = asyncio.run(tool.check_permissions(inp, None))  # type: ignore[arg-type]
    assert check.behavior == "allow"
