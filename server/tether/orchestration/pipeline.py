"""The one pipeline every tool call passes through, built-in and MCP tools alike:

    refresh settings -> parse input -> validate -> PreToolUse hooks (may rewrite the input)
    -> permission decision (rules, mode, control plane, sandbox, tool) -> ask the user if
    needed -> call -> PostToolUse hooks (may rewrite the result) -> result

A hook's "deny" blocks before any rule is read; its "ask" turns an allow into a question;
its "allow" skips a question only when no rule and nothing protected asked it. The
question shows the input exactly as it will run (after any rewrite), with control
characters made visible, and approves only that. Failures at any step become an
``is_error`` tool result the model can act on; only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tether.core.files import os_error_text
from tether.core.hooks import Hooks
from tether.core.messages import TextBlock, ToolResultBlock, ToolUseBlock
from tether.editor.port import PermissionReply, PermissionRequest
from tether.errors import ToolError
from tether.orchestration.result_rewrite import rewritten_result
from tether.permissions.display import visible
from tether.permissions.policy import Decision, RuleSet, decide, suggest_rule
from tether.protocol.content import TextToolContent, ToolContent
from tether.protocol.updates import RejectedBy
from tether.tools.base import Tool, ToolResult, error_result
from tether.tools.context import ToolContext
from tether.tools.pool import ToolPool

log = logging.getLogger(__name__)

REJECTED = (
    "The user declined this tool call, so it did not run and nothing was changed. "
    "Do not retry it; stop and wait for the user to say how to continue."
)
REJECTED_WITH_FEEDBACK = (
    "The user declined this tool call, so it did not run and nothing was changed. "
    "They said: {feedback}"
)
PLAN_KEPT = (
    "The user wants to keep planning: plan mode continues and nothing may be changed yet. "
    "{feedback}Revise the plan, then present it again with ExitPlanMode."
)


@dataclass
class ToolRuntime:
    """What the pipeline needs from the engine, per session."""

    session_id: str
    tools: ToolPool
    rules: RuleSet
    hooks: Hooks
    make_context: Callable[[str], ToolContext]
    remember_rule: Callable[[Literal["allow", "deny"], str], None]
    refresh: Callable[[], None] = lambda: None
    """Called before each call: the workspace applies changed settings files here."""


approved_call: ContextVar[str | None] = ContextVar("approved_call", default=None)
"""The tool_use id whose call is running, set only here after the decision allowed it."""


@dataclass
class ToolOutcome:
    block: ToolResultBlock
    display: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())
    raw_output: Any = None
    stop_turn: str | None = None
    """Set when a hook ended the turn after this call."""
    rejected: RejectedBy | None = None
    """Set when the call did not run because someone said no (editors show who)."""

    @property
    def failed(self) -> bool:
        return self.block.is_error


def _fail(use: ToolUseBlock, message: str) -> ToolOutcome:
    result = error_result(message)
    return ToolOutcome(result.to_block(use.id), [TextToolContent(text=message)])


def _rejected(
    use: ToolUseBlock, by: RejectedBy, message: str, shown: list[ToolContent]
) -> ToolOutcome:
    """A call that did not run because someone said no: the model reads ``message``; the
    editor shows ``shown`` (never the text meant for the model)."""
    result = error_result(message)
    return ToolOutcome(result.to_block(use.id), shown, rejected=by)


async def run_tool_use(use: ToolUseBlock, rt: ToolRuntime) -> ToolOutcome:
    rt.refresh()
    tool = rt.tools.get(use.name)
    if tool is None:
        available = ", ".join(sorted(rt.tools))
        return _fail(use, f"No tool named {use.name} is available. Available tools: {available}")
    if use.truncated:
        return _fail(
            use,
            f"The input of this {use.name} call was cut off (the response reached its output "
            "token limit), so it was not run. Send the call again, smaller if needed.",
        )
    if use.refused is not None:
        return _fail(
            use,
            f"The input of this {use.name} call {use.refused}, so it was not run. Send the "
            "call again with plain JSON (text as characters, a flatter structure).",
        )
    parsed = tool.parse(use.input)
    if isinstance(parsed, str):
        return _fail(use, parsed)
    data: Any = parsed
    ctx = rt.make_context(use.id)
    problem = await tool.validate(data, ctx)
    if problem:
        return _fail(use, problem)

    raw_input = use.input
    verdict = await rt.hooks.pre_tool_use(use.name, use.input, use.id)
    if verdict.stop_turn is not None:
        stopped = _fail(use, f"A PreToolUse hook stopped the turn: {verdict.stop_turn}")
        stopped.stop_turn = verdict.stop_turn
        return stopped
    if verdict.decision == "deny":
        reason = f"A PreToolUse hook blocked this call: {verdict.reason}"
        return _rejected(use, "hook", reason, [TextToolContent(text=reason)])
    if verdict.updated_input is not None:
        reparsed = tool.parse(known_fields(tool, verdict.updated_input))
        if isinstance(reparsed, str):
            return _fail(use, f"A hook rewrote the input into something invalid: {reparsed}")
        problem = await tool.validate(reparsed, ctx)
        if problem:
            return _fail(use, f"A hook rewrote the input into something invalid: {problem}")
        data, raw_input = reparsed, verdict.updated_input

    decision = await decide(tool, data, ctx, rt.rules)
    hook_allows = verdict.decision == "allow" and decision.rule is None and not decision.forced
    if decision.behavior == "deny":
        reason = f"Permission denied: {decision.reason}"
        by: RejectedBy = "mode" if decision.by_mode else "rule"
        return _rejected(use, by, reason, [TextToolContent(text=reason)])
    if decision.behavior == "ask" and hook_allows:
        pass
    elif decision.behavior == "ask" or verdict.decision == "ask":
        reply = await _ask(tool, data, ctx, use, raw_input, decision, rt)
        if not reply.allowed:
            return _refused(use, reply, decision)
        ctx = replace(ctx, approval=reply)
        if reply.updated_input is not None and reply.updated_input != raw_input:
            rewritten = await _rewritten(tool, reply.updated_input, ctx, rt)
            if isinstance(rewritten, str):
                return _fail(use, rewritten)
            data, raw_input = rewritten, reply.updated_input

    token = approved_call.set(use.id)
    try:
        result = await _call(tool, data, ctx)
    finally:
        approved_call.reset(token)
    post = await rt.hooks.post_tool_use(
        use.name, raw_input, use.id, result.raw_output or result.content, result.is_error
    )
    replaced = post.updated_output
    if post.updated_mcp_output is not None and use.name.startswith("mcp__"):
        replaced = post.updated_mcp_output
    if replaced is not None:
        result = rewritten_result(result, replaced)
    block = result.to_block(use.id)
    notes = [n for n in (verdict.additional_context, post.additional_context) if n]
    if notes:
        extra = [TextBlock(text=f"<system-reminder>{n}</system-reminder>") for n in notes]
        block = block.model_copy(update={"content": [*block.content, *extra]})
    display = result.display or [TextToolContent(text=block.text)]
    return ToolOutcome(block, display, result.raw_output, post.stop_turn)


async def _rewritten(
    tool: Tool[Any], updated: dict[str, Any], ctx: ToolContext, rt: ToolRuntime
) -> Any:
    """The input whoever approved the call rewrote it into, checked as any input is: it must
    parse and validate, and no deny rule may match it (the approval was for this input, so
    a question it would raise is answered). A string says why it cannot run."""
    parsed = tool.parse(known_fields(tool, updated))
    if isinstance(parsed, str):
        return f"The approval rewrote the input into something invalid: {parsed}"
    problem = await tool.validate(parsed, ctx)
    if problem:
        return f"The approval rewrote the input into something invalid: {problem}"
    again = await decide(tool, parsed, ctx, rt.rules)
    if again.behavior == "deny":
        return f"Permission denied: {again.reason}"
    return parsed


def known_fields(tool: Tool[Any], updated: dict[str, Any]) -> dict[str, Any]:
    """A rewritten input without the fields the tool does not have, which Claude Code drops
    too (a program that sends back its own bookkeeping must not make the call fail)."""
    model = tool.input_model
    if model.model_config.get("extra") != "forbid":
        return updated
    names = set(model.model_fields) | {
        f.alias for f in model.model_fields.values() if f.alias is not None
    }
    return {k: v for k, v in updated.items() if k in names}


def _refused(use: ToolUseBlock, reply: PermissionReply, decision: Decision) -> ToolOutcome:
    """The user said no (or the question was cancelled). A plan sent back keeps its text in
    the chat; the model is told what the user said, if anything."""
    feedback = visible(reply.feedback) if reply.feedback else None
    if decision.plan is not None:
        note = f"Their feedback: {feedback}\n" if feedback else ""
        message = PLAN_KEPT.format(feedback=note)
        return _rejected(use, "user", message, [TextToolContent(text=decision.plan)])
    message = REJECTED_WITH_FEEDBACK.format(feedback=feedback) if feedback else REJECTED
    return _rejected(use, "user", message, [])


async def _ask(
    tool: Tool[Any],
    data: Any,
    ctx: ToolContext,
    use: ToolUseBlock,
    raw_input: dict[str, Any],
    decision: Decision,
    rt: ToolRuntime,
) -> PermissionReply:
    # A forced question approves this one call: "always" must not turn it into a rule.
    rule = None if decision.forced else suggest_rule(tool, data, ctx)
    content = list(decision.content)
    if decision.reason and decision.forced and decision.plan is None:
        content.append(TextToolContent(text=visible(decision.reason)))
    request = PermissionRequest(
        session_id=rt.session_id,
        tool_call_id=use.id,
        tool_name=tool.name,
        title=visible(tool.title(data)),
        tool_kind=tool.kind,
        raw_input=raw_input,
        content=content,
        always_rule=rule,
        kind="plan" if decision.plan is not None else "tool",
        plan=decision.plan,
    )
    try:
        reply = await ctx.editor.ask_permission(request)
    except asyncio.CancelledError:
        raise
    except Exception as e:  # an editor that cannot answer is a rejection, never a hang
        log.warning("permission question failed: %s", e)
        return request.reply("reject_once")
    option = reply.option
    if option is not None and option.rule is not None and option.kind == "allow_always":
        rt.remember_rule("allow", option.rule)
    elif option is not None and option.rule is not None and option.kind == "reject_always":
        rt.remember_rule("deny", option.rule)
    return reply


async def _call(tool: Tool[Any], data: Any, ctx: ToolContext) -> ToolResult:
    try:
        return await tool.call(data, ctx)
    except asyncio.CancelledError:
        raise
    except ToolError as e:
        return error_result(str(e))
    except OSError as e:  # the system refused: say why, as the tools themselves do
        log.warning("tool %s: %s", tool.name, e)
        where = f" ({e.filename})" if e.filename else ""
        return error_result(f"{tool.name} could not finish: {os_error_text(e)}{where}.")
    except Exception as e:
        log.exception("tool %s crashed", tool.name)
        return error_result(f"{tool.name} failed with an internal error: {type(e).__name__}: {e}")
