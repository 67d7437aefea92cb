"""The permission decision for one tool call: hooks aside, rules then mode then the tool.

Order (Claude Code's, plus the protected control plane):

    deny rules                                   -> deny
    leaving plan mode / writing the control plane -> the user decides, every time
    ask rules                                    -> ask
    plan mode and not read-only                  -> deny
    allow rules                                  -> allow
    the mode's default, which for ``default`` is the tool's own ``check_permissions``

``dontAsk`` turns every remaining question into a denial; ``bypassPermissions`` allows all
but deny/ask rules and the questions only the user may answer. Paths are matched as
canonical paths as well as as written, so a symlink cannot walk around a deny rule. Bash
has its own order (``bash_policy``): it is the one tool whose input is a program.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.core.environ import expand_home
from tether.permissions.bash_policy import decide_bash, suggest_for_bash
from tether.permissions.controlplane import is_control_plane
from tether.permissions.decision import Decision, RuleSet, effective_mode, refuse_or_ask
from tether.permissions.rules import (
    EDIT_FAMILY,
    NAMED_SPECS,
    READ_FAMILY,
    Rule,
    Subject,
    matches,
    url_host,
)
from tether.protocol.updates import Mode
from tether.tools.base import PermissionCheck, Tool
from tether.tools.context import ToolContext
from tether.tools.paths import canonical, is_within

__all__ = ["Decision", "PermissionCheck", "RuleSet", "decide", "suggest_rule"]

ALWAYS_ASK_TOOLS = frozenset({"ExitPlanMode"})
"""Tools whose every call is a question for the user (leaving plan mode shows the plan)."""
PATH_TOOLS = EDIT_FAMILY | READ_FAMILY


def _paths(tool: Tool[Any], content: str | None, ctx: ToolContext) -> tuple[Path, Path] | None:
    """The path as written (made absolute) and its canonical form."""
    if content is None or tool.name not in PATH_TOOLS:
        return None
    raw = Path(expand_home(content, ctx.config.caller_env))
    absolute = Path(os.path.normpath(raw if raw.is_absolute() else ctx.cwd / raw))
    return absolute, canonical(absolute)


def _subjects(tool: Tool[Any], content: str | None, ctx: ToolContext) -> list[Subject]:
    paths = _paths(tool, content, ctx)
    if paths is None:
        return [Subject(tool.name, content, ctx.cwd, ctx.home)]
    home = ctx.home
    return [Subject(tool.name, str(p), ctx.cwd, home) for p in dict.fromkeys(paths)]


def _first(rules: list[Rule], subjects: list[Subject]) -> Rule | None:
    return next((r for r in rules for s in subjects if matches(r, s)), None)


async def decide(tool: Tool[Any], data: Any, ctx: ToolContext, rules: RuleSet) -> Decision:
    """Rules, then the mode, then the tool's own check."""
    content = tool.rule_content(data)
    if tool.name == "Bash" and content is not None:
        return await decide_bash(content, data, ctx, rules)
    mode = effective_mode(ctx)
    subjects = _subjects(tool, content, ctx)
    deny = _first(rules.deny, subjects)
    if deny is not None:
        return Decision("deny", f"denied by the rule {deny}", str(deny))
    if tool.name in ALWAYS_ASK_TOOLS:
        check = await tool.check_permissions(data, ctx)
        if check.behavior == "deny":
            return Decision("deny", check.message or f"{tool.name} refused this call")
        return Decision("ask", check.message, content=check.content, forced=True, plan=check.plan)
    paths = _paths(tool, content, ctx)
    if paths is not None and tool.name in EDIT_FAMILY and await _any_protected(paths, ctx):
        check = await tool.check_permissions(data, ctx)
        reason = f"{content} is a protected configuration file; only you can approve this write"
        return refuse_or_ask(mode, reason, check.content)
    ask = _first(rules.ask, subjects)
    if ask is not None:
        return await _with_check(tool, data, ctx, Decision("ask", f"the rule {ask} asks", str(ask)))
    if mode == "plan" and not tool.is_read_only(data):
        return Decision(
            "deny", "plan mode is read-only: present the plan instead of acting", by_mode=True
        )
    # Allow rules see the canonical path only: a symlink named like an allowed file is not it.
    allow_subjects = subjects[-1:] if paths is not None else subjects
    allow = _first(rules.allow, allow_subjects)
    if allow is not None:
        return Decision("allow", f"allowed by the rule {allow}", str(allow))
    return await _mode_default(tool, data, ctx, mode)


async def _any_protected(paths: Sequence[Path], ctx: ToolContext) -> bool:
    """Whether a write to one of ``paths`` is a control-plane write or opens a door: the
    doors are looked for in the tree (a walk, files read), so on a tool thread, not on
    the event loop every session and the editor share."""
    return await ctx.threads.run(lambda: any(_protected(p, ctx) for p in paths))


def _protected(path: Path, ctx: ToolContext) -> bool:
    roots = [canonical(ctx.cwd), *(canonical(d) for d in ctx.allowed_dirs)]
    sandbox = ctx.config.shell_sandbox
    return is_control_plane(path, roots) or (
        sandbox is not None and sandbox.door(path, ctx.config.caller_env) is not None
    )


async def _with_check(tool: Tool[Any], data: Any, ctx: ToolContext, decision: Decision) -> Decision:
    """Attach the tool's preview (e.g. a diff) to a question decided by a rule."""
    check = await tool.check_permissions(data, ctx)
    if check.behavior == "deny":
        return Decision("deny", check.message or decision.reason)
    return Decision(decision.behavior, decision.reason, decision.rule, check.content)


async def _mode_default(tool: Tool[Any], data: Any, ctx: ToolContext, mode: Mode) -> Decision:
    check: PermissionCheck = await tool.check_permissions(data, ctx)
    if check.behavior == "deny":
        return Decision("deny", check.message or f"{tool.name} refused this call")
    if check.behavior == "allow":
        return Decision("allow", check.message or "allowed by the tool", content=check.content)
    if mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode", content=check.content)
    if mode == "acceptEdits" and tool.kind == "edit" and _inside_workspace(tool, data, ctx):
        return Decision("allow", "acceptEdits mode", content=check.content)
    if mode == "dontAsk":
        return Decision("deny", "dontAsk mode denies what is not allowed by a rule", by_mode=True)
    return Decision("ask", check.message, content=check.content)


def _inside_workspace(tool: Tool[Any], data: Any, ctx: ToolContext) -> bool:
    paths = _paths(tool, tool.rule_content(data), ctx)
    if paths is None:
        return False
    roots = [canonical(ctx.cwd), *(canonical(d) for d in ctx.allowed_dirs)]
    return is_within(paths[1], roots)


def suggest_rule(tool: Tool[Any], data: Any, ctx: ToolContext) -> str | None:
    """The rule an "always" answer saves: a command prefix for Bash (None when no rule is
    narrow enough), the file for edits."""
    content = tool.rule_content(data)
    if content is None:
        return tool.name
    if tool.name == "Bash":
        return suggest_for_bash(content, ctx)
    if tool.name in NAMED_SPECS:
        return f"{tool.name}({content})"
    if tool.kind == "fetch":
        return f"{tool.name}(domain:{url_host(content)})"
    path = Path(content)
    try:
        rel = canonical(path if path.is_absolute() else ctx.cwd / path).relative_to(
            canonical(ctx.cwd)
        )
        return f"{tool.name}(/{rel.as_posix()})"
    except ValueError:
        return f"{tool.name}(//{content.lstrip('/')})"
