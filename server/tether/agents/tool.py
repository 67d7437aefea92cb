"""The Agent tool: delegate a task to a subagent with a fresh context; only its final
report comes back. With ``run_in_background`` it becomes a task whose completion arrives
as a notification at a later turn boundary.

Recursion is bounded in code: a background worker cannot start background agents, and
nesting depth and concurrent tasks are capped."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.errors import ToolError
from tether.protocol.content import TextToolContent
from tether.protocol.updates import AgentMessageChunk, ToolCall, ToolCallUpdate
from tether.tasks.registry import Task, TaskOutcome
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine, TurnResult


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


def _final_text(child: QueryEngine, result: TurnResult) -> str:
    last = next((m for m in reversed(child.messages) if m.role == "assistant"), None)
    text = last.text.strip() if last is not None else ""
    if result.terminal.reason != "completed":
        terminal = result.terminal
        return f"The agent stopped early ({terminal.reason}: {terminal.message}).\n{text}"
    return text or "(the agent finished without a report)"


async def _drive(child: QueryEngine, prompt: str, on_update: Any) -> TurnResult:
    try:
        async for update in child.submit(prompt):
            on_update(update)
    finally:
        await child.close()
    assert child.last_result is not None
    return child.last_result


def make_agent_tool(parent: QueryEngine) -> Tool[AgentInput]:
    def describe() -> str:
        kinds = "\n".join(f"- {d.name}: {d.description}" for d in parent.agent_definitions.values())
        return prompts.render("tools/Agent.md", agents=kinds)

    async def call(inp: AgentInput, ctx: ToolContext) -> ToolResult:
        from tether.agents.spawn import spawn_child

        definition = parent.agent_definitions.get(inp.subagent_type)
        if definition is None:
            known = ", ".join(sorted(parent.agent_definitions))
            raise ToolError(f"Unknown subagent_type {inp.subagent_type!r}. Available: {known}")
        state = ctx.state
        if inp.run_in_background and state.background_worker:
            raise ToolError(
                "Background agents cannot start other background agents: this agent is itself "
                "running in the background. Do the work yourself, or run a foreground agent."
            )
        if state.agent_depth >= parent.config.max_agent_depth:
            raise ToolError(
                f"Agents may nest at most {parent.config.max_agent_depth} levels deep; do this "
                "part of the work yourself."
            )
        child = spawn_child(
            parent, definition, tool_use_id=ctx.tool_use_id, background=inp.run_in_background
        )
        if inp.run_in_background:
            return _start_background(child, inp, ctx)
        calls = 0

        def progress(update: Any) -> None:
            nonlocal calls
            if isinstance(update, ToolCall):
                calls += 1
                text = f"{calls} tool call(s) so far; now: {update.title}"
                ctx.emit(
                    ToolCallUpdate(
                        tool_call_id=ctx.tool_use_id, content=[TextToolContent(text=text)]
                    )
                )

        result = await _drive(child, inp.prompt, progress)
        report = _final_text(child, result)
        return ToolResult(
            content=f"{report}\n\n[agent {child.session_id}, {calls} tool call(s)]",
            is_error=result.terminal.reason != "completed",
            raw_output={"agentId": child.session_id, "stopReason": result.terminal.stop_reason},
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


def _start_background(child: QueryEngine, inp: AgentInput, ctx: ToolContext) -> ToolResult:
    async def run(task: Task) -> TaskOutcome:
        lines: list[str] = []

        def log(update: Any) -> None:
            if isinstance(update, AgentMessageChunk):
                lines.append(update.text)
            elif isinstance(update, ToolCall):
                lines.append(f"\n[tool] {update.title}\n")

        result = await _drive(child, inp.prompt, log)
        await asyncio.to_thread(task.output_path.write_text, "".join(lines), "utf-8")
        report = _final_text(child, result)
        ok = result.terminal.reason == "completed"
        return TaskOutcome(
            status="completed" if ok else "failed",
            summary=f'Agent "{inp.description}" {"completed" if ok else "stopped early"}',
            result=report,
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
            "agentId": child.session_id,
            "taskId": task.id,
            "outputFile": str(task.output_path),
        },
    )
