"""MCP tools as Tether tools: built with ``build_tool``, so they enter the same pool and the
same pipeline (hooks, rules, modes, permission questions, transcript) as built-in tools.

Names are ``mcp__<server>__<tool>``, the form permission rules and hooks match. The
read-only hint decides what the fail-closed defaults otherwise would: a read-only tool is
concurrency-safe and runs without a question; any other tool asks. Input is checked
against the server's JSON schema before the question, so the user is never asked to
approve a call that cannot run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Literal

import jsonschema
import mcp_types as types
from jsonschema.validators import validator_for
from mcp import MCPError
from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import DEFAULT_REF_TEMPLATE, GenerateJsonSchema, JsonSchemaMode

from tether.mcp.render import MAX_OUTPUT_CHARS, render_result
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool, error_result
from tether.tools.context import ToolContext

MAX_NAME = 64
"""The longest tool name every provider accepts."""
MAX_DESCRIPTION = 2048
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

CallTool = Callable[[str, dict[str, Any]], Awaitable[types.CallToolResult]]


def mcp_tool_name(server: str, tool: str) -> str:
    name = f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
    return f"{name[: MAX_NAME - 9]}_{digest}"


class McpArguments(BaseModel):
    """Input of an MCP tool: anything the server's schema allows (checked in ``validate``).
    Each tool gets a subclass whose JSON schema is the server's own."""

    model_config = ConfigDict(extra="allow")
    mcp_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = None,
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        *,
        union_format: Literal["any_of", "primitive_type_array"] = "any_of",
    ) -> dict[str, Any]:
        return cls.mcp_schema

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _schema(tool: types.Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    schema.setdefault("type", "object")
    # The Messages API wants an object schema with properties; some servers omit them.
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def _checker(schema: dict[str, Any]) -> Any:
    try:
        cls: Any = validator_for(schema)  # pyright: ignore[reportUnknownVariableType]
        cls.check_schema(schema)
        return cls(schema)
    except jsonschema.SchemaError:
        return None  # the server validates its own input; a broken schema is its problem


def wrap_tool(
    server: str,
    tool: types.Tool,
    call_tool: CallTool,
    *,
    max_chars: int = MAX_OUTPUT_CHARS,
) -> Tool[McpArguments]:
    name = mcp_tool_name(server, tool.name)
    schema = _schema(tool)
    model = type(f"Mcp_{name}", (McpArguments,), {"mcp_schema": schema, "__module__": __name__})
    checker = _checker(schema)
    hints = tool.annotations or types.ToolAnnotations()
    read_only = hints.read_only_hint is True
    destructive = not read_only and hints.destructive_hint is not False
    label = tool.title or hints.title or tool.name
    description = (tool.description or label).strip()[:MAX_DESCRIPTION]

    async def call(data: McpArguments, _ctx: ToolContext) -> ToolResult:
        try:
            result = await call_tool(tool.name, data.arguments())
        except MCPError as e:
            return error_result(f"The MCP server {server} refused the call: {e.error.message}")
        return render_result(result, server=server, max_chars=max_chars)

    async def validate(data: McpArguments, _ctx: ToolContext) -> str | None:
        if checker is None:
            return None
        errors = sorted(checker.iter_errors(data.arguments()), key=lambda e: list(e.path))
        if not errors:
            return None
        lines = [
            f"- {'.'.join(str(p) for p in err.path) or '(input)'}: {err.message}"
            for err in errors[:10]
        ]
        return f"InputValidationError: {name} failed due to the following issue(s):\n" + "\n".join(
            lines
        )

    async def permission(_data: McpArguments, _ctx: ToolContext) -> PermissionCheck:
        if read_only:
            return PermissionCheck("allow")
        return PermissionCheck("ask", f"{label} from the MCP server {server}")

    return build_tool(
        name=name,
        description=description,
        input_model=model,
        call=call,
        kind="read" if read_only else "other",
        is_read_only=lambda _d: read_only,
        is_concurrency_safe=lambda _d: read_only,
        is_destructive=lambda _d: destructive,
        validate=validate,
        check_permissions=permission,
        title=lambda _d: f"{label} ({server})",
    )
