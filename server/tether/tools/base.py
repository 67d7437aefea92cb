"""The Tool protocol object and ``build_tool``, its factory with fail-closed defaults.

A tool is data plus small functions. The same definition serves the model (name,
description, JSON schema), the orchestrator (read-only / concurrency-safe flags), the
permission pipeline (``check_permissions``, ``rule_content``), the editor (title, kind,
locations) and the transcript (the rendered ``ToolResult``).

Defaults are fail-closed: a tool that says nothing is not read-only, not concurrency-safe,
and asks permission before every call.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from tether.core.messages import ResultPart, TextBlock, ToolResultBlock
from tether.core.wellformed import has_lone_surrogate, well_formed
from tether.protocol.content import ToolContent
from tether.protocol.updates import Location, ToolKind
from tether.providers.base import ToolSpec, WebSearchOptions
from tether.tools.context import ToolContext

InputT = TypeVar("InputT", bound=BaseModel)

Behavior = Literal["allow", "ask", "deny", "passthrough"]


@dataclass(frozen=True)
class PermissionCheck:
    """A tool's own opinion about one call; rules and the mode are applied around it."""

    behavior: Behavior
    message: str = ""
    content: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())
    """Shown in the permission question (e.g. the diff an edit would make)."""
    plan: str | None = None
    """Makes the question a plan approval (``PermissionRequest.kind == "plan"``)."""


@dataclass
class ToolResult:
    content: str | list[ResultPart]
    """What the model reads."""
    is_error: bool = False
    display: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())
    """What the editor shows (diff, terminal output); defaults to the text."""
    raw_output: Any = None

    def to_block(self, tool_use_id: str) -> ToolResultBlock:
        parts: list[ResultPart] = (
            [TextBlock(text=self.content)] if isinstance(self.content, str) else self.content
        )
        if not parts:
            parts = [TextBlock(text="(no output)")]
        # Text the API would refuse (a file name's undecodable bytes) never reaches it.
        parts = [
            p.model_copy(update={"text": well_formed(p.text)})
            if isinstance(p, TextBlock) and has_lone_surrogate(p.text)
            else p
            for p in parts
        ]
        return ToolResultBlock(tool_use_id=tool_use_id, content=parts, is_error=self.is_error)


def error_result(message: str) -> ToolResult:
    return ToolResult(content=f"<tool_use_error>{message}</tool_use_error>", is_error=True)


async def _no_validation(_input: Any, _ctx: ToolContext) -> str | None:
    return None


async def _ask(_input: Any, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("ask")


def _never(_input: Any) -> bool:
    return False


def _no_locations(_input: Any, _ctx: ToolContext) -> list[Location]:
    return []


def _no_rule_content(_input: Any) -> str | None:
    return None


@dataclass(frozen=True, kw_only=True)
class Tool(Generic[InputT]):
    name: str
    description: str
    input_model: type[InputT]
    call: Callable[[InputT, ToolContext], Awaitable[ToolResult]]
    kind: ToolKind
    is_read_only: Callable[[InputT], bool]
    is_concurrency_safe: Callable[[InputT], bool]
    is_destructive: Callable[[InputT], bool]
    validate: Callable[[InputT, ToolContext], Awaitable[str | None]]
    check_permissions: Callable[[InputT, ToolContext], Awaitable[PermissionCheck]]
    title: Callable[[InputT], str]
    locations: Callable[[InputT, ToolContext], list[Location]]
    rule_content: Callable[[InputT], str | None]
    """The string a ``Name(spec)`` permission rule is matched against (command, path...)."""
    server: Callable[[], WebSearchOptions] | None = None
    """For a tool the provider runs on its side: its options, read at each request."""

    def spec(self) -> ToolSpec:
        if self.server is not None:  # its options are read at each request
            schema = input_schema(self.input_model)
            return ToolSpec(self.name, self.description, schema, self.server())
        return self._spec

    @functools.cached_property
    def _spec(self) -> ToolSpec:
        """What the model is offered of this tool, made once: every request sends it (a
        tool's fields never change; a changed tool is another one)."""
        return ToolSpec(self.name, self.description, input_schema(self.input_model))

    def parse(self, raw: dict[str, Any]) -> InputT | str:
        """Validate raw model input; on failure return a message naming the bad fields."""
        try:
            return self.input_model.model_validate(raw)
        except ValidationError as e:
            return describe_validation_error(self.name, e)


def build_tool(
    *,
    name: str,
    description: str,
    input_model: type[InputT],
    call: Callable[[InputT, ToolContext], Awaitable[ToolResult]],
    kind: ToolKind = "other",
    is_read_only: Callable[[InputT], bool] = _never,
    is_concurrency_safe: Callable[[InputT], bool] = _never,
    is_destructive: Callable[[InputT], bool] = _never,
    validate: Callable[[InputT, ToolContext], Awaitable[str | None]] = _no_validation,
    check_permissions: Callable[[InputT, ToolContext], Awaitable[PermissionCheck]] = _ask,
    title: Callable[[InputT], str] | None = None,
    locations: Callable[[InputT, ToolContext], list[Location]] = _no_locations,
    rule_content: Callable[[InputT], str | None] = _no_rule_content,
    server: Callable[[], WebSearchOptions] | None = None,
) -> Tool[InputT]:
    """Make a Tool; anything not given falls back to the safe choice."""
    return Tool(
        name=name,
        description=description,
        input_model=input_model,
        call=call,
        kind=kind,
        is_read_only=is_read_only,
        is_concurrency_safe=is_concurrency_safe,
        is_destructive=is_destructive,
        validate=validate,
        check_permissions=check_permissions,
        title=title or (lambda _input: name),
        locations=locations,
        rule_content=rule_content,
        server=server,
    )


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()
"""The schemas made, while their models live: an MCP connection makes a model per tool,
and those of closed connections must go with them (a long-lived daemon opens thousands)."""
_SCHEMAS_LOCK = threading.Lock()


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON schema for the model, by alias, without pydantic's noise (titles). Cached for as
    long as the model lives: it is on every request's path, and callers must treat it as
    read-only."""
    with _SCHEMAS_LOCK:
        found = _SCHEMAS.get(model)
    if found is None:
        found = _strip_titles(model.model_json_schema(by_alias=True))
        with _SCHEMAS_LOCK:
            found = _SCHEMAS.setdefault(model, found)
    return found


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():  # pyright: ignore[reportUnknownVariableType]
            if k == "title" and isinstance(v, str):
                continue
            if k == "properties" and isinstance(v, dict):
                out[k] = {pk: _strip_titles(pv) for pk, pv in v.items()}  # pyright: ignore[reportUnknownVariableType]
            else:
                out[str(k)] = _strip_titles(v)  # pyright: ignore[reportUnknownArgumentType]
        return out
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]  # pyright: ignore[reportUnknownVariableType]
    return node


def describe_validation_error(tool: str, error: ValidationError) -> str:
    problems: list[str] = []
    for err in error.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(input)"
        kind = err["type"]
        if kind == "missing":
            problems.append(f"the required parameter `{loc}` is missing")
        elif kind == "extra_forbidden":
            problems.append(f"an unexpected parameter `{loc}` was provided")
        else:
            problems.append(f"the parameter `{loc}` is invalid: {err['msg']}")
    return f"InputValidationError: {tool} failed due to the following issue(s):\n" + "\n".join(
        f"- {p}" for p in problems
    )
