"""Who answers permission questions in print mode, besides the terminal.

``--permission-prompt-tool stdio``: the SDK program, with a ``can_use_tool`` control request
(its ``can_use_tool`` callback). ``--permission-prompt-tool mcp__server__tool``: an MCP
tool. As in Claude Code, the tool is called with ``{"tool_name", "input", "tool_use_id"}`` and
answers with text holding JSON: ``{"behavior": "allow", "updatedInput": {...}}`` or
``{"behavior": "deny", "message": "..."}``. Anything else, or a failing call, is a no, and
the reason is shown on stderr. An allow with a different ``updatedInput`` runs the call with
that input (checked again by the tool pipeline); ``updatedPermissions`` (the SDK's
``PermissionUpdate`` list) add rules to the session, or to the local settings, or change the
mode. A program's PermissionRequest hook callbacks are asked at the same time as
``can_use_tool``; the first decision answers the question (as in Claude Code 2.1).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from tether.cli.control import ControlChannel, ControlError
from tether.cli.driver import PermissionAsker, SessionDriver
from tether.core.hooks import current_agent
from tether.editor.port import PermissionReply, PermissionRequest
from tether.permissions.rules import Rule
from tether.protocol.updates import MODES

if TYPE_CHECKING:
    import mcp_types

PermissionDecider = Callable[[PermissionRequest, list[dict[str, Any]]], Awaitable[Any]]
"""Asked before the question goes out (a program's PermissionRequest hooks): a decision, or
None."""
RULE_BEHAVIORS = ("allow", "deny", "ask")


def answer_reply(request: PermissionRequest, answer: Any, who: str) -> PermissionReply:
    """The reply meant by a ``{"behavior": ...}`` answer (``can_use_tool`` answers the same)."""
    if not isinstance(answer, dict):
        return _no(request, f"{who} gave no decision")
    decision: dict[str, Any] = answer  # pyright: ignore[reportUnknownVariableType]
    behavior = decision.get("behavior")
    if behavior == "allow":
        if request.kind == "plan":
            return request.reply("plan_default")
        updated: Any = decision.get("updatedInput")
        reply = request.reply("allow_once")
        # An empty updatedInput means "as asked", as in Claude Code.
        if isinstance(updated, dict) and updated and updated != request.raw_input:
            return replace(reply, updated_input=cast(dict[str, Any], updated))
        return reply
    if behavior == "deny":
        message = str(decision.get("message") or "") or None
        option = "plan_keep" if request.kind == "plan" else "reject_once"
        return request.reply(option, message)
    return _no(request, f"{who} answered with an unknown behavior {behavior!r}")


async def _first_decision(
    question: Awaitable[dict[str, Any]],
    decide: PermissionDecider | None,
    request: PermissionRequest,
    suggestions: list[dict[str, Any]],
) -> Any:
    """``can_use_tool`` and the PermissionRequest hooks asked at once, as Claude Code 2.1
    does: the first decision wins and the other question is withdrawn. Hooks that decide
    nothing leave it to ``can_use_tool``; its failure raises ``ControlError`` (a no) unless
    a hook decides."""
    program = asyncio.ensure_future(question)  # sent first, as Claude Code sends it
    if decide is None:
        return await program
    hooks = asyncio.ensure_future(decide(request, suggestions))
    try:
        done, _ = await asyncio.wait({program, hooks}, return_when=asyncio.FIRST_COMPLETED)
        if hooks in done and hooks.result() is not None:
            return hooks.result()
        if program in done and (program.exception() is None or hooks.done()):
            return program.result()
        if program in done:  # can_use_tool failed: a hook's decision can still answer
            decided = await hooks
            return decided if decided is not None else program.result()
        return await program  # the hooks decided nothing
    finally:
        for pending in (program, hooks):
            pending.cancel()


def _no(request: PermissionRequest, why: str) -> PermissionReply:
    sys.stderr.write(f"[tether] {request.tool_name} denied: {why}\n")
    option = "plan_keep" if request.kind == "plan" else "reject_once"
    return request.reply(option, why)


def _text(result: mcp_types.CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in result.content if c.type == "text")


def mcp_permission_asker(name: str, driver: SessionDriver) -> PermissionAsker:
    async def ask(request: PermissionRequest) -> PermissionReply:
        tool_input = {"plan": request.plan} if request.kind == "plan" else request.raw_input
        arguments = {
            "tool_name": request.tool_name,
            "input": tool_input,
            "tool_use_id": request.tool_call_id,
        }
        try:
            result = await driver.call_mcp_tool(name, arguments)
        except Exception as e:  # the question must end in an answer: a failure is a no
            return _no(request, f"the permission tool {name} failed: {e}")
        if result.is_error:
            return _no(request, f"the permission tool {name} failed: {_text(result)[:300]}")
        try:
            answer = json.loads(_text(result))
        except ValueError:
            return _no(request, f"the permission tool {name} did not answer with JSON")
        return answer_reply(request, answer, f"the permission tool {name}")

    return ask


def _suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    """The "always" rule the question offers, as the SDK's ``PermissionUpdate``."""
    rule = request.always_rule
    if rule is None:
        return []
    tool, _, rest = rule.partition("(")
    content = rest[:-1] if rest.endswith(")") else None
    entry: dict[str, Any] = {"toolName": tool}
    if content:
        entry["ruleContent"] = content
    return [
        {"type": "addRules", "rules": [entry], "behavior": "allow", "destination": "localSettings"}
    ]


def stdio_asker(
    channel: ControlChannel,
    state: Callable[[str], None],
    interrupt: Callable[[], object],
    driver: SessionDriver,
    decide_first: PermissionDecider | None = None,
) -> PermissionAsker:
    """Questions go to the program as ``can_use_tool`` requests; ``state`` hears
    ``requires_action`` while one is out; a denial with ``interrupt`` stops the turn."""

    async def ask(request: PermissionRequest) -> PermissionReply:
        plan = request.kind == "plan"
        suggestions = _suggestions(request)
        tool_input = {"plan": request.plan} if plan else request.raw_input
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": "ExitPlanMode" if plan else request.tool_name,
            "display_name": request.tool_name,
            "input": tool_input,
            "description": request.title,
            "permission_suggestions": suggestions,
            "blocked_path": None,
            "tool_use_id": request.tool_call_id,
        }
        scope = current_agent.get()
        if scope is not None:  # a subagent's call: the program's ctx.agentID
            body["agent_id"] = scope.agent_id
        state("requires_action")
        try:
            answer = await _first_decision(
                channel.request(body), decide_first, request, suggestions
            )
        except ControlError as e:
            return _no(request, str(e))
        finally:
            state("running")
        if isinstance(answer, dict):
            decision = cast(dict[str, Any], answer)
            if decision.get("behavior") == "deny" and decision.get("interrupt"):
                # The program wants the whole turn stopped, not only this call refused.
                asyncio.get_running_loop().call_soon(interrupt)
            if decision.get("behavior") == "allow":
                await apply_updates(decision.get("updatedPermissions"), driver)
        return answer_reply(request, answer, "the SDK's can_use_tool")

    return ask


async def apply_updates(updates: Any, driver: SessionDriver) -> None:
    """The SDK's ``PermissionUpdate`` list: rules for the session (``session``, ``cliArg``)
    or saved in the local settings (``localSettings``; other files are the user's to edit,
    so their rules hold for the session only, said on stderr), and mode changes."""
    if not isinstance(updates, list):
        return
    for raw in cast(list[Any], updates):
        if not isinstance(raw, dict):
            continue
        update = cast(dict[str, Any], raw)
        kind, destination = update.get("type"), update.get("destination", "session")
        if kind == "addRules" and update.get("behavior") in RULE_BEHAVIORS:
            rules = [_rule_text(r) for r in cast(list[Any], update.get("rules") or [])]
            rules = [r for r in rules if r is not None]
            persist = destination == "localSettings"
            if destination not in ("session", "cliArg", "localSettings"):
                sys.stderr.write(
                    f"[tether] rules for {destination} hold for this session only: Tether "
                    "saves approved rules in the local settings\n"
                )
            driver.add_rules(update["behavior"], rules, persist=persist)
        elif kind == "setMode" and update.get("mode") in MODES:
            await driver.set_mode(update["mode"])
        else:
            sys.stderr.write(f"[tether] permission update {kind!r} is not supported, left out\n")


def _rule_text(rule: Any) -> str | None:
    if not isinstance(rule, dict):
        return None
    entry = cast(dict[str, Any], rule)
    tool, content = entry.get("toolName"), entry.get("ruleContent")
    if not isinstance(tool, str) or not tool:
        return None
    text = f"{tool}({content})" if isinstance(content, str) and content else tool
    try:
        Rule.parse(text)
    except ValueError as e:
        sys.stderr.write(f"[tether] permission update left out: {e}\n")
        return None
    return text
