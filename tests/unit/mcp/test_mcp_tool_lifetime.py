"""The tools of a closed MCP connection go with it: nothing cached on the request path
(the schema sent with every request) keeps their models alive in a long-lived daemon."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import mcp.types as types

from tether.mcp.tools import wrap_tool
from tether.tools.base import input_schema


async def _never(_name: str, _args: dict[str, Any]) -> types.CallToolResult:
    raise AssertionError("not called")


def test_a_dropped_tools_model_and_schema_are_collected() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tool = wrap_tool("srv", types.Tool(name="find", inputSchema=schema), _never)
    first = tool.spec()
    assert first.input_schema["properties"] == {"q": {"type": "string"}}
    assert tool.spec().input_schema is first.input_schema  # cached while it lives
    model = weakref.ref(tool.input_model)
    del tool, first
    gc.collect()
    assert model() is None


def test_the_schema_is_cached_per_model() -> None:
    one = wrap_tool("a", types.Tool(name="t", inputSchema={"type": "object"}), _never)
    two = wrap_tool("b", types.Tool(name="t", inputSchema={"type": "object"}), _never)
    assert input_schema(one.input_model) is input_schema(one.input_model)
    assert input_schema(one.input_model) is not input_schema(two.input_model)
