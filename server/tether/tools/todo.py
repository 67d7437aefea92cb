"""TodoWrite: the agent's task list for the session, shown in the editor as a plan."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.protocol.updates import Plan, PlanEntry
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str = Field(min_length=1, description='The task, imperative: "Run the tests".')
    status: Literal["pending", "in_progress", "completed"] = Field(
        description="pending, in_progress (one at a time) or completed."
    )
    active_form: str = Field(
        alias="activeForm",
        min_length=1,
        description='The task as it is being done: "Running the tests".',
    )


class TodoWriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[TodoItem] = Field(description="The whole updated list (it replaces the old one).")


async def _call(inp: TodoWriteInput, ctx: ToolContext) -> ToolResult:
    entries = [
        PlanEntry(content=t.content, status=t.status, active_form=t.active_form) for t in inp.todos
    ]
    ctx.state.todos = entries
    ctx.emit(Plan(entries=list(entries)))
    text = (
        "The todo list was updated. Keep following it: mark each task in_progress when you "
        "start it and completed as soon as it is done."
    )
    running = sum(1 for t in inp.todos if t.status == "in_progress")
    if running > 1:
        text += f"\nNote: {running} tasks are in_progress; work on one at a time."
    return ToolResult(text, raw_output={"todos": [t.model_dump(by_alias=True) for t in inp.todos]})


async def _allow(_inp: TodoWriteInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("allow")


TODO_WRITE_TOOL: Tool[TodoWriteInput] = build_tool(
    name="TodoWrite",
    description=prompts.load("tools/TodoWrite.md"),
    input_model=TodoWriteInput,
    call=_call,
    kind="think",
    is_concurrency_safe=lambda _inp: True,
    check_permissions=_allow,
    title=lambda inp: f"Update the todo list ({len(inp.todos)} items)",
)
