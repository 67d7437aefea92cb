"""MCP tools wrapped as Tether tools, their results rendered, and the pool kept in sync."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from mcp import MCPError

from tether.core.messages import ImageBlock, TextBlock
from tether.mcp.attach import PoolSync
from tether.mcp.render import render_result
from tether.mcp.tools import MAX_NAME, McpArguments, mcp_tool_name, wrap_tool
from tether.tools.base import Tool
from tether.tools.pool import DeferralPolicy, ToolPool
from tether.tools.registry import core_tools

SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string", "title": "Id"}, "n": {"type": "integer"}},
    "required": ["id"],
}


def raw_tool(name: str = "get_item", *, read_only: bool | None = None) -> types.Tool:
    return types.Tool(
        name=name,
        title="Get item",
        description="Fetch one item.",
        input_schema=SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=read_only),
    )


class Calls:
    def __init__(self, result: types.CallToolResult | Exception) -> None:
        self.result = result
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        self.seen.append((name, args))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def parse(tool: Tool[Any], raw: dict[str, Any]) -> McpArguments:
    data = tool.parse(raw)
    assert isinstance(data, McpArguments)
    return data


def test_names_are_normalized_and_bounded() -> None:
    assert mcp_tool_name("my server", "do.it") == "mcp__my_server__do_it"
    long = mcp_tool_name("s", "x" * 100)
    assert len(long) == MAX_NAME and long.startswith("mcp__s__xxx")
    assert long != mcp_tool_name("s", "x" * 101)


def test_the_schema_is_the_servers_and_read_only_decides_the_defaults() -> None:
    calls = Calls(types.CallToolResult(content=[types.TextContent(text="ok")]))
    ro = wrap_tool("srv", raw_tool(read_only=True), calls)
    rw = wrap_tool("srv", raw_tool("put_item"), calls)
    spec = ro.spec()
    assert spec.name == "mcp__srv__get_item"
    assert spec.input_schema["required"] == ["id"]
    assert spec.description == "Fetch one item."
    data = parse(ro, {"id": "a"})
    assert ro.is_read_only(data) and ro.is_concurrency_safe(data) and ro.kind == "read"
    assert not rw.is_read_only(data) and not rw.is_concurrency_safe(data)
    assert rw.is_destructive(data)
    assert asyncio.run(ro.check_permissions(data, None)).behavior == "allow"  # type: ignore[arg-type]
    assert asyncio.run(rw.check_permissions(data, None)).behavior == "ask"  # type: ignore[arg-type]
    assert ro.title(data) == "Get item (srv)"


def test_input_is_checked_against_the_schema_before_the_call() -> None:
    calls = Calls(types.CallToolResult(content=[types.TextContent(text="ok")]))
    tool = wrap_tool("srv", raw_tool(), calls)
    problem = asyncio.run(tool.validate(parse(tool, {"n": "x"}), None))  # type: ignore[arg-type]
    assert problem is not None and problem.startswith("InputValidationError: mcp__srv__get_item")
    assert "'id' is a required property" in problem and "n: 'x' is not of type" in problem
    assert asyncio.run(tool.validate(parse(tool, {"id": "a"}), None)) is None  # type: ignore[arg-type]
    result = asyncio.run(tool.call(parse(tool, {"id": "a", "n": 2}), None))  # type: ignore[arg-type]
    assert calls.seen == [("get_item", {"id": "a", "n": 2})]
    assert result.content == [TextBlock(text="ok")] and not result.is_error


def test_a_protocol_error_is_a_tool_failure() -> None:
    from mcp_types import ErrorData

    calls = Calls(MCPError.from_error_data(ErrorData(code=-32602, message="bad args")))
    tool = wrap_tool("srv", raw_tool(), calls)
    result = asyncio.run(tool.call(parse(tool, {"id": "a"}), None))  # type: ignore[arg-type]
    assert result.is_error and "refused the call: bad args" in str(result.content)


PNG = "iVBORw0KGgo="


@pytest.mark.parametrize(
    ("content", "structured", "expected"),
    [
        ([types.TextContent(text="a"), types.TextContent(text="b")], None, ["a", "b"]),
        ([], {"x": 1}, ['{"x": 1}']),
        ([types.TextContent(text="mirrored")], {"x": 1}, ["mirrored"]),
        ([types.AudioContent(data="AAAA", mime_type="audio/wav")], None, ["[audio of type"]),
        (
            [types.ResourceLink(name="log", uri="file:///l", description="the log")],
            None,
            ["[resource log at file:///l: the log]"],
        ),
        (
            [
                types.EmbeddedResource(
                    resource=types.TextResourceContents(uri="mem://a", text="hello")
                )
            ],
            None,
            ['<resource uri="mem://a">\nhello\n</resource>'],
        ),
        ([], None, ["(srv returned no content)"]),
    ],
)
def test_results_render_for_the_model(
    content: list[types.ContentBlock], structured: Any, expected: list[str]
) -> None:
    result = render_result(
        types.CallToolResult(content=content, structured_content=structured), server="srv"
    )
    assert isinstance(result.content, list)
    texts = [p.text for p in result.content if isinstance(p, TextBlock)]
    assert len(texts) == len(expected)
    assert all(t.startswith(e) for t, e in zip(texts, expected, strict=True))
    if structured is not None:
        assert result.raw_output == structured


def test_images_errors_and_truncation() -> None:
    image = render_result(
        types.CallToolResult(content=[types.ImageContent(data=PNG, mime_type="image/png")]),
        server="srv",
    )
    assert isinstance(image.content, list) and isinstance(image.content[0], ImageBlock)
    odd = render_result(
        types.CallToolResult(content=[types.ImageContent(data=PNG, mime_type="image/tiff")]),
        server="srv",
    )
    assert "image of type image/tiff" in str(odd.content)
    failed = render_result(
        types.CallToolResult(content=[types.TextContent(text="boom")], is_error=True),
        server="srv",
    )
    assert failed.is_error and "reported an error" in str(failed.content)
    long = render_result(
        types.CallToolResult(content=[types.TextContent(text="x" * 50)]), server="s", max_chars=20
    )
    assert isinstance(long.content, list)
    assert long.content[0] == TextBlock(text="x" * 20)
    assert "30 more characters" in str(long.content[1])


class FakeManager:
    """What PoolSync reads from a manager."""

    def __init__(self, tools: list[Tool[Any]]) -> None:
        self._tools = tools

    def tools(self) -> list[Tool[Any]]:
        return self._tools

    def summary(self) -> str:
        return f"srv ({len(self._tools)} tools)"


def test_pool_sync_defers_large_sets_and_keeps_the_pool_current() -> None:
    calls = Calls(types.CallToolResult(content=[]))
    tools = [wrap_tool("srv", raw_tool(f"t{i}"), calls) for i in range(3)]
    manager = FakeManager(tools)
    pool = ToolPool(core_tools())
    window = [1_000_000]
    sync = PoolSync(pool, manager, DeferralPolicy(), lambda: window[0])  # type: ignore[arg-type]
    sync()
    assert not sync.deferred and "ToolSearch" not in pool
    assert [t.name for t in pool.core][-3:] == ["mcp__srv__t0", "mcp__srv__t1", "mcp__srv__t2"]
    window[0] = 100  # a small window: the same schemas are now too big
    sync()
    assert sync.deferred and pool.core[-1].name == "ToolSearch"
    assert {t.name for t in pool.deferred} == {t.name for t in tools}
    assert "srv (3 tools)" in pool.core[-1].description
    manager._tools = tools[:1]
    sync()
    assert [t.name for t in pool.deferred] == ["mcp__srv__t0"] and "mcp__srv__t2" not in pool
    window[0] = 1_000_000
    sync()
    assert "ToolSearch" not in pool and pool.core[-1].name == "mcp__srv__t0"
