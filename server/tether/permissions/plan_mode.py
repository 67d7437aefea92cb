"""ExitPlanMode: leaving plan mode is itself a permission question, showing the plan.

In plan mode only read-only calls run. When the model has a plan it calls ExitPlanMode with
it; the pipeline always asks the user (``policy.ALWAYS_ASK_TOOLS``: no rule, mode or hook
answers for them) and the question carries the plan. The user starts on the plan
asking before edits (``default``) or accepting edits (``acceptEdits``), or keeps planning,
with feedback the model reads; either way the plan stays in the conversation.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tether.editor.port import PLAN_ACCEPT_EDITS
from tether.errors import ToolError
from tether.protocol.content import TextToolContent
from tether.protocol.updates import Mode, ModeChange
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext

DESCRIPTION = """\
Use this tool when you are in plan mode and have finished planning: it presents your plan \
to the user and asks to leave plan mode so you can start making changes. Pass the plan as \
concise markdown. Only call it when the task needs code changes; for research-only \
questions, just answer. If the user rejects the plan, stay in plan mode and revise it."""


class ExitPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: str = Field(description="The plan to carry out, in markdown.")


async def _validate(inp: ExitPlanModeInput, ctx: ToolContext) -> str | None:
    if ctx.state.mode != "plan":
        return "Not in plan mode: there is no plan mode to leave. Go ahead with the task."
    if not inp.plan.strip():
        return "The plan is empty. Write the plan you want the user to approve."
    return None


async def _check(inp: ExitPlanModeInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck(
        "ask", "Leave plan mode and start on this plan?", [_shown(inp)], plan=inp.plan
    )


def _shown(inp: ExitPlanModeInput) -> TextToolContent:
    return TextToolContent(text=inp.plan)


async def _call(inp: ExitPlanModeInput, ctx: ToolContext) -> ToolResult:
    approval = ctx.approval
    if ctx.state.mode != "plan" and approval is None:
        raise ToolError("Not in plan mode any more.")
    if ctx.state.mode == "plan":
        accept_edits = approval is not None and approval.option == PLAN_ACCEPT_EDITS
        mode: Mode = "acceptEdits" if accept_edits else "default"
        ctx.state.mode = mode
        ctx.emit(ModeChange(mode=mode))
    # Otherwise whoever approved chose the mode with the approval (an Agent SDK program's
    # ``setMode`` update): plan mode is over already, in that mode.
    how = {
        "acceptEdits": "file edits in the workspace are accepted without asking; other "
        "actions still ask",
        "bypassPermissions": "nothing asks for permission",
        "dontAsk": "what is not allowed beforehand is refused without asking",
    }.get(ctx.state.mode, "changes are still subject to the usual permission questions")
    feedback = f" They added: {approval.feedback}" if approval and approval.feedback else ""
    return ToolResult(
        f"The user approved the plan and plan mode is over.{feedback} Start with the first "
        f"step; {how}.",
        display=[_shown(inp)],
    )


def _always(_inp: ExitPlanModeInput) -> bool:
    return True  # changes no file; the question is where the control is


EXIT_PLAN_MODE_TOOL: Tool[ExitPlanModeInput] = build_tool(
    name="ExitPlanMode",
    description=DESCRIPTION,
    input_model=ExitPlanModeInput,
    call=_call,
    kind="think",
    is_read_only=_always,
    validate=_validate,
    check_permissions=_check,
    title=lambda _inp: "Leave plan mode with this plan",
)
