"""Who answers permission questions in print mode, besides the terminal.

``--permission-prompt-tool stdio``: the SDK program, with a ``can_use_tool`` control request
(its ``can_use_tool`` callback). ``--permission-prompt-tool mcp__server__tool``: an MCP
tool. As in Claude Code, the tool is called with ``{"tool_name", "input", "tool_use_id"}`` and
answers with text holding JSON: ``{"behavior": "allow", "updatedInput": {...}}`` or
``{"behavior": "deny", "message": "..."}``. Anything else, or a failing call, is a no, and
the reason is shown on stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether.cli.control import ControlChannel, ControlError
from tether.cli.driver import PermissionAsker, SessionDriver
from tether.editor.port import PermissionReply, PermissionRequest

if TYPE_CHECKING:
    import mcp_types

_UNCHANGED_ONLY = (
    "the permission tool changed the call's input; Tether runs a call only as it was "
    "asked for, so it was not run"
)


def answer_reply(request: PermissionRequest, answer: Any, who: str) -> PermissionReply:
    """The reply meant by a ``{"behavior": ...}`` answer (``can_use_tool`` answers the same)."""
    if not isinstance(answer, dict):
        return _no(request, f"{who} gave no decision")
    decision: dict[str, Any] = answer  # pyright: ignore[reportUnknownVariableType]
    behavior = decision.get("behavior")
    if behavior == "allow":
        updated = decision.get("updatedInput")
        if updated is not None and updated != request.raw_input:
            return _no(request, _UNCHANGED_ONLY)
        return request.reply("plan_default" if request.kind == "plan" else "allow_once")
    if behavior == "deny":
        message = str(decision.get("message") or "") or None
        option = "plan_keep" if request.kind == "plan" else "reject_once"
        return request.reply(option, message)
    return _no(request, f"{who} answered with an unknown behavior {behavior!r}")


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
    channel: ControlChannel, state: Callable[[str], None], interrupt: Callable[[], object]
) -> PermissionAsker:
    """Questions go to the program as ``can_use_tool`` requests; ``state`` hears
    ``requires_action`` while one is out; a denial with ``interrupt`` stops the turn."""

    async def ask(request: PermissionRequest) -> PermissionReply:
        plan = request.kind == "plan"
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": "ExitPlanMode" if plan else request.tool_name,
            "display_name": request.tool_name,
            "input": {"plan": request.plan} if plan else request.raw_input,
            "description": request.title,
            "permission_suggestions": _suggestions(request),
            "blocked_path": None,
            "tool_use_id": request.tool_call_id,
        }
        state("requires_action")
        try:
            answer = await channel.request(body)
        except ControlError as e:
            return _no(request, str(e))
        finally:
            state("running")
        if answer.get("behavior") == "deny" and answer.get("interrupt"):
            # The program wants the whole turn stopped, not only this call refused.
            asyncio.get_running_loop().call_soon(interrupt)
        return answer_reply(request, answer, "the SDK's can_use_tool")

    return ask
