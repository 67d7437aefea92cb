"""The one pipeline every tool call passes through, built-in and MCP tools alike:

    parse input -> validate -> PreToolUse hooks -> permission decision (rules, mode, tool)
    -> ask the user if needed -> call -> PostToolUse hooks -> result

Failures at any step become an ``is_error`` tool result the model can act on; only
cancellation propagates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.editor.port import PermissionAnswer, PermissionRequest
from tether.engine.hooks import Hooks
from tether.engine.messages import TextBlock, ToolResultBlock, ToolUseBlock
from tether.errors import ToolError
from tether.permissions.policy import Decision, RuleSet, decide, suggest_rule
from tether.protocol.content import TextToolContent, ToolContent
from tether.tools.base import Tool, ToolResult, error_result
from tether.tools.context import ToolContext

log = logging.getLogger(__name__)

REJECTED = (
    "The user declined this tool call, so it did not run and nothing was changed. "
    "Do not retry it; stop and wait for the user to say how to continue."
)


@dataclass
class ToolRuntime:
    """What the pipeline needs from the engine, per session."""

    session_id: str
    tools: dict[str, Tool[Any]]
    rules: RuleSet
    hooks: Hooks
    make_context: Callable[[str], ToolContext]
    remember_rule: Callable[[Literal["allow", "deny"], str], None]


@dataclass
class ToolOutcome:
    block: ToolResultBlock
    display: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())
    raw_output: Any = None
    stop_turn: str | None = None
    """Set when a hook ended the turn after this call."""

    @property
    def failed(self) -> bool:
        return self.block.is_error


def _fail(use: ToolUseBlock, message: str) -> ToolOutcome:
    result = error_result(message)
    return ToolOutcome(result.to_block(use.id), [TextToolContent(text=message)])


async def run_tool_use(use: ToolUseBlock, rt: ToolRuntime) -> ToolOutcome:
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
    parsed = tool.parse(use.input)
    if isinstance(parsed, str):
        return _fail(use, parsed)
    data: Any = parsed
    ctx = rt.make_context(use.id)
    problem = await tool.validate(data, ctx)
    if problem:
        return _fail(use, problem)

    verdict = await rt.hooks.pre_tool_use(use.name, use.input, use.id)
    if verdict.stop_turn is not None:
        stopped = _fail(use, f"A PreToolUse hook stopped the turn: {verdict.stop_turn}")
        stopped.stop_turn = verdict.stop_turn
        return stopped
    if verdict.updated_input is not None:
        reparsed = tool.parse(verdict.updated_input)
        if isinstance(reparsed, str):
            return _fail(use, f"A hook rewrote the input into something invalid: {reparsed}")
        data = reparsed
    if verdict.decision == "deny":
        return _fail(use, f"A PreToolUse hook blocked this call: {verdict.reason}")

    decision = await decide(tool, data, ctx, rt.rules)
    if decision.behavior == "allow" or (
        verdict.decision == "allow" and decision.behavior == "ask" and decision.rule is None
    ):
        pass
    elif decision.behavior == "deny":
        return _fail(use, f"Permission denied: {decision.reason}")
    else:
        answer = await _ask(tool, data, ctx, use, decision, rt)
        if answer not in ("allow_once", "allow_always"):
            return _fail(use, REJECTED)

    result = await _call(tool, data, ctx)
    post = await rt.hooks.post_tool_use(
        use.name, use.input, use.id, result.raw_output or result.content, result.is_error
    )
    block = result.to_block(use.id)
    if post.additional_context:
        note = TextBlock(text=f"<system-reminder>{post.additional_context}</system-reminder>")
        block = block.model_copy(update={"content": [*block.content, note]})
    display = result.display or [TextToolContent(text=block.text)]
    return ToolOutcome(block, display, result.raw_output, post.stop_turn)


async def _ask(
    tool: Tool[Any],
    data: Any,
    ctx: ToolContext,
    use: ToolUseBlock,
    decision: Decision,
    rt: ToolRuntime,
) -> PermissionAnswer:
    rule = suggest_rule(tool, data, ctx)
    request = PermissionRequest(
        session_id=rt.session_id,
        tool_call_id=use.id,
        tool_name=tool.name,
        title=tool.title(data),
        tool_kind=tool.kind,
        raw_input=use.input,
        content=decision.content,
        always_rule=rule,
    )
    try:
        answer = await ctx.editor.ask_permission(request)
    except asyncio.CancelledError:
        raise
    except Exception as e:  # an editor that cannot answer is a rejection, never a hang
        log.warning("permission question failed: %s", e)
        return "reject_once"
    if answer == "allow_always":
        rt.remember_rule("allow", rule)
    elif answer == "reject_always":
        rt.remember_rule("deny", rule)
    return answer


async def _call(tool: Tool[Any], data: Any, ctx: ToolContext) -> ToolResult:
    try:
        return await tool.call(data, ctx)
    except asyncio.CancelledError:
        raise
    except ToolError as e:
        return error_result(str(e))
    except Exception as e:
        log.exception("tool %s crashed", tool.name)
        return error_result(f"{tool.name} failed with an internal error: {type(e).__name__}: {e}")
