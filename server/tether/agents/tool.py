"""The Agent tool: delegate a task to a subagent with a fresh context; only its final
report comes back. With ``run_in_background`` it becomes a task whose completion arrives
as a notification at a later turn boundary.

Recursion is bounded in code: a background worker cannot start background agents, and
nesting depth and concurrent tasks are capped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.agents.definitions import AgentDefinition
from tether.errors import ToolError
from tether.protocol.content import TextToolContent
from tether.protocol.updates import (
    AgentMessageChunk,
    SessionUpdate,
    SubagentActivity,
    ToolCall,
    ToolCallUpdate,
)
from tether.tasks.registry import Task, TaskOutcome
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext


@dataclass(frozen=True)
class SubagentReport:
    """How a subagent's run ended, and its final words."""

    text: str
    completed: bool
    stop_reason: str
    """The wire's stop reason of its turn."""


class Subagent(Protocol):
    @property
    def agent_id(self) -> str: ...

    async def run(self, prompt: str, on_update: Callable[[SessionUpdate], None]) -> SubagentReport:
        """Run the task to its end (then release the subagent); updates go to ``on_update``."""
        ...


class Spawner(Protocol):
    """Makes subagents for one session (the engine's side of the Agent tool)."""

    @property
    def definitions(self) -> Mapping[str, AgentDefinition]: ...

    @property
    def max_depth(self) -> int: ...

    def spawn(
        self, definition: AgentDefinition, *, tool_use_id: str, background: bool
    ) -> Subagent: ...


class AgentInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The complete task for the agent, with all context it needs")
    subagent_type: str = Field(
        default="general-purpose", description="Which kind of agent to use (see the list)"
    )
    run_in_background: bool = Field(
        default=False,
        description="Start the agent and return at once; its report arrives as a notification",
    )


async def _allow(_inp: AgentInput, _ctx: ToolContext) -> PermissionCheck:
    # The subagent's own tool calls go through the permission pipeline.
    return PermissionCheck("allow")


def make_agent_tool(spawner: Spawner) -> Tool[AgentInput]:
    def describe() -> str:
        kinds = "\n".join(f"- {d.name}: {d.description}" for d in spawner.definitions.values())
        return prompts.render("tools/Agent.md", agents=kinds)

    async def call(inp: AgentInput, ctx: ToolContext) -> ToolResult:
        definition = spawner.definitions.get(inp.subagent_type)
        if definition is None:
            known = ", ".join(sorted(spawner.definitions))
            raise ToolError(f"Unknown subagent_type {inp.subagent_type!r}. Available: {known}")
        state = ctx.state
        if inp.run_in_background and state.background_worker:
            raise ToolError(
                "Background agents cannot start other background agents: this agent is itself "
                "running in the background. Do the work yourself, or run a foreground agent."
            )
        if state.agent_depth >= spawner.max_depth:
            raise ToolError(
                f"Agents may nest at most {spawner.max_depth} levels deep; do this "
                "part of the work yourself."
            )
        child = spawner.spawn(
            definition, tool_use_id=ctx.tool_use_id, background=inp.run_in_background
        )
        if inp.run_in_background:
            return _start_background(child, inp, ctx)
        calls = 0

        def progress(update: SessionUpdate) -> None:
            nonlocal calls
            if isinstance(update, ToolCall | ToolCallUpdate):
                ctx.emit(
                    SubagentActivity(
                        tool_call_id=ctx.tool_use_id,
                        agent_id=child.agent_id,
                        agent_type=definition.name,
                        update=update,
                    )
                )
            if isinstance(update, ToolCall):
                calls += 1
                text = f"{calls} tool call(s) so far; now: {update.title}"
                ctx.emit(
                    ToolCallUpdate(
                        tool_call_id=ctx.tool_use_id, content=[TextToolContent(text=text)]
                    )
                )

        report = await child.run(inp.prompt, progress)
        return ToolResult(
            content=f"{report.text}\n\n[agent {child.agent_id}, {calls} tool call(s)]",
            is_error=not report.completed,
            raw_output={"agentId": child.agent_id, "stopReason": report.stop_reason},
        )

    return build_tool(
        name="Agent",
        description=describe(),
        input_model=AgentInput,
        call=call,
        kind="think",
        is_read_only=lambda _i: True,
        is_concurrency_safe=lambda _i: True,
        check_permissions=_allow,
        title=lambda i: f"Agent: {i.description}",
        rule_content=lambda i: i.subagent_type,
    )


def _start_background(child: Subagent, inp: AgentInput, ctx: ToolContext) -> ToolResult:
    async def run(task: Task) -> TaskOutcome:
        lines: list[str] = []

        def log(update: SessionUpdate) -> None:
            if isinstance(update, AgentMessageChunk):
                lines.append(update.text)
            elif isinstance(update, ToolCall):
                lines.append(f"\n[tool] {update.title}\n")

        report = await child.run(inp.prompt, log)
        await asyncio.to_thread(task.output_path.write_text, "".join(lines), "utf-8")
        ok = report.completed
        return TaskOutcome(
            status="completed" if ok else "failed",
            summary=f'Agent "{inp.description}" {"completed" if ok else "stopped early"}',
            result=report.text,
        )

    try:
        task = ctx.tasks.start(
            kind="agent", description=inp.description, tool_use_id=ctx.tool_use_id, run=run
        )
    except RuntimeError as e:
        raise ToolError(str(e))
    return ToolResult(
        content=(
            f"Agent started in the background with task ID: {task.id}\n"
            "Its report will arrive as a task notification; its log is written to "
            f"{task.output_path}.\n"
            "Continue with other work meanwhile; do not wait or poll."
        ),
        raw_output={
            "status": "async_launched",
            "agentId": child.agent_id,
            "taskId": task.id,
            "outputFile": str(task.output_path),
        },
    )
