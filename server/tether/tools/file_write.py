"""What Edit, Write and NotebookEdit share: one way to declare a file-changing tool; the
plan's checks serve as the call's validation and as the permission question's preview (the
diff); the apply step (parent folder, one write through the editor versioned against the
text read, the diff the editor shows); and what a write whose outcome the editor never
showed means for the next one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from tether import prompts
from tether.core.files import os_error_text
from tether.editor.port import Document, Unconfirmed, WriteOutcome
from tether.errors import ToolError
from tether.protocol.content import DiffContent
from tether.protocol.updates import Location
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.tools.diff_view import diff_content
from tether.tools.paths import display_path
from tether.tools.read import file_uri

REREAD_FIRST = (
    "Your last change to this file could not be confirmed: it may or may not have been "
    "applied. Read the file again, then edit it."
)
UNCONFIRMED = (
    "The change to {path} may or may not have been applied: {reason}. Read the file again "
    "before changing it further; do not simply repeat the change."
)


class FileChange(Protocol):
    """A planned write: the file, the text it was read with (None: it does not exist), and
    the exact text to write."""

    @property
    def path(self) -> Path: ...
    @property
    def base(self) -> Document | None: ...
    @property
    def new_text(self) -> str: ...


class FileInput(BaseModel):
    """The input of a tool that changes one file: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


InputT = TypeVar("InputT", bound=BaseModel)
Planner = Callable[[InputT, ToolContext], Awaitable[FileChange]]


def file_tool(
    name: str,
    input_model: type[InputT],
    plan: Planner[InputT],
    call: Callable[[InputT, ToolContext], Awaitable[ToolResult]],
    file_of: Callable[[InputT], str],
    *,
    title: Callable[[InputT], str] | None = None,
) -> Tool[InputT]:
    """A tool that changes one file: validated by planning, its permission question showing
    the plan's diff, located at the file it names, and matched by rules on that file."""

    def locations(inp: InputT, ctx: ToolContext) -> list[Location]:
        return [Location(uri=file_uri(file_of(inp), ctx.cwd, ctx.config.caller_env))]

    return build_tool(
        name=name,
        description=prompts.load(f"tools/{name}.md"),
        input_model=input_model,
        call=call,
        kind="edit",
        validate=validate_by_planning(plan),
        check_permissions=preview_by_planning(plan),
        title=title or (lambda inp: f"{name} {file_of(inp)}"),
        locations=locations,
        rule_content=file_of,
    )


def diff_of(change: FileChange) -> DiffContent:
    old = change.base.text if change.base is not None else None
    return diff_content(change.path, old, change.new_text)


def validate_by_planning(
    plan: Planner[InputT],
) -> Callable[[InputT, ToolContext], Awaitable[str | None]]:
    """A call is valid when it can be planned; the plan's refusal is the model's message."""

    async def validate(inp: InputT, ctx: ToolContext) -> str | None:
        try:
            await plan(inp, ctx)
        except ToolError as e:
            return str(e)
        return None

    return validate


def preview_by_planning(
    plan: Planner[InputT],
) -> Callable[[InputT, ToolContext], Awaitable[PermissionCheck]]:
    """The permission question shows the diff the call would make; rules and the mode decide."""

    async def check(inp: InputT, ctx: ToolContext) -> PermissionCheck:
        try:
            change = await plan(inp, ctx)
        except ToolError:
            return PermissionCheck("passthrough")
        return PermissionCheck("passthrough", content=[diff_of(change)])

    return check


async def write_change(ctx: ToolContext, change: FileChange, verb: str) -> WriteOutcome:
    """One write through the editor, versioned against ``change.base``."""
    if change.base is None:
        await asyncio.to_thread(change.path.parent.mkdir, parents=True, exist_ok=True)
    label = f"{verb} {display_path(change.path, ctx.cwd)}"
    try:
        return await ctx.editor.write(change.path, change.new_text, base=change.base, label=label)
    except OSError as e:  # the text goes to a temporary file renamed over the old one
        was = "is as it was" if change.base is not None else "was not created"
        raise ToolError(
            f"Cannot write {change.path}: {os_error_text(e)}. Nothing was written: the file {was}."
        ) from None


def refuse_unconfirmed(ctx: ToolContext, path: Path) -> None:
    """A file whose last write has an unknown outcome must be read before it is written."""
    record = ctx.files.get(path)
    if record is not None and record.unconfirmed:
        raise ToolError(REREAD_FIRST)


def unconfirmed_result(ctx: ToolContext, change: FileChange, outcome: Unconfirmed) -> ToolResult:
    """Tell the model exactly what is known, and make it read the file before the next write."""
    ctx.files.mark_unconfirmed(change.path)
    return ToolResult(
        content=UNCONFIRMED.format(path=change.path, reason=outcome.reason),
        display=[diff_of(change)],
    )
