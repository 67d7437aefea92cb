"""TaskOutput and TaskStop: look at and end the session's background tasks."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from tether import prompts
from tether.errors import ToolError
from tether.tasks.registry import Task
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.tools.shell import OutputBuffer


class TaskOutputInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="ID of the background task.")
    block: bool = Field(default=True, description="Wait for the task to finish (default true).")
    timeout: int = Field(
        default=30_000,
        ge=0,
        le=600_000,
        description="How long to wait when blocking, in milliseconds (default 30000).",
    )


class TaskStopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(
        validation_alias=AliasChoices("task_id", "shell_id"),
        description="ID of the background task to stop.",
    )


def _unknown(task_id: str) -> ToolError:
    return ToolError(f"No background task with ID {task_id!r} in this session.")


def read_output(path: Path, max_chars: int) -> str:
    """The output file, its middle cut when large (only head and tail are read from disk)."""
    budget = max_chars * 4  # bytes; UTF-8 is at most 4 per character
    buf = OutputBuffer(max_chars)
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            if size <= 2 * budget:
                buf.feed(f.read(), final=True)
                return buf.text()
            head = f.read(budget)
            f.seek(size - budget)
            tail = f.read(budget)
    except FileNotFoundError:
        return ""
    return _join(head, tail, size - 2 * budget, max_chars)


def _join(head: bytes, tail: bytes, cut: int, max_chars: int) -> str:
    half = max_chars // 2
    first = head.decode("utf-8", "replace")[:half]
    last = tail.decode("utf-8", "replace")[-half:]
    return f"{first}\n\n[... about {cut} bytes cut ...]\n\n{last}"


def describe(task: Task, output: str, *, waited: bool) -> str:
    lines = [f"<task_id>{task.id}</task_id>", f"<status>{task.status}</status>"]
    if task.exit_code is not None:
        lines.append(f"<exit_code>{task.exit_code}</exit_code>")
    if task.summary:
        lines.append(f"<summary>{task.summary}</summary>")
    if task.result:
        lines.append(f"<result>\n{task.result}\n</result>")
    lines.append(f"<output>\n{output.rstrip()}\n</output>" if output.strip() else "<output/>")
    if waited and not task.finished:
        lines.append("The task is still running; call TaskOutput again later to check on it.")
    return "\n".join(lines)


async def _output(inp: TaskOutputInput, ctx: ToolContext) -> ToolResult:
    task = ctx.tasks.get(inp.task_id)
    if task is None:
        raise _unknown(inp.task_id)
    if inp.block and not task.finished:
        await ctx.tasks.wait(task.id, inp.timeout / 1000)
    output = await asyncio.to_thread(
        read_output, task.output_path, ctx.config.bash_max_output_chars
    )
    return ToolResult(describe(task, output, waited=inp.block), raw_output={"status": task.status})


async def _stop(inp: TaskStopInput, ctx: ToolContext) -> ToolResult:
    task = ctx.tasks.get(inp.task_id)
    if task is None:
        raise _unknown(inp.task_id)
    if task.finished:
        raise ToolError(f"Task {task.id} is not running (it is {task.status}).")
    await ctx.tasks.stop(task.id)
    return ToolResult(f"Stopped task {task.id} ({task.description}).")


async def _allow(_inp: object, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("allow")


TASK_OUTPUT_TOOL: Tool[TaskOutputInput] = build_tool(
    name="TaskOutput",
    description=prompts.load("tools/TaskOutput.md"),
    input_model=TaskOutputInput,
    call=_output,
    kind="other",
    is_read_only=lambda _inp: True,
    is_concurrency_safe=lambda _inp: True,
    check_permissions=_allow,
    title=lambda inp: f"Output of task {inp.task_id}",
)

TASK_STOP_TOOL: Tool[TaskStopInput] = build_tool(
    name="TaskStop",
    description=prompts.load("tools/TaskStop.md"),
    input_model=TaskStopInput,
    call=_stop,
    kind="other",
    is_concurrency_safe=lambda _inp: True,
    check_permissions=_allow,
    title=lambda inp: f"Stop task {inp.task_id}",
)
