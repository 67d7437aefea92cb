"""The permission decision for a Bash call, in this order::

deny rules (any reading of any subcommand)       -> deny
dangerouslyDisableSandbox                        -> the user decides, every time
a redirection into the control plane             -> the user decides, every time
ask rules                                        -> ask
a command the deny rules cannot be checked on    -> the user decides
destructive git (unless an exact allow rule)     -> the user decides, even in acceptEdits
plan mode and not read-only                      -> deny
no sandbox and not read-only                     -> the user decides (allow rules too)
allow rules (every subcommand covered)           -> allow
the mode's default (read-only commands allowed)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.permissions.bash_rules import (
    deny_readings,
    match_all,
    match_any,
    peel,
    redirect_targets,
    runs_through_args,
    writes_by_redirect,
)
from tether.permissions.controlplane import is_control_plane
from tether.permissions.decision import Decision, RuleSet, effective_mode, refuse_or_ask
from tether.permissions.display import visible
from tether.permissions.shell import is_read_only_command, parse_command
from tether.protocol.content import TextToolContent, ToolContent
from tether.tools.context import ToolContext
from tether.tools.paths import canonical

_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _git_subcommand(words: Sequence[str]) -> tuple[str, list[str]] | None:
    if not words or os.path.basename(words[0]) != "git":
        return None
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _GIT_VALUE_OPTIONS else 1
    return (words[i], list(words[i + 1 :])) if i < len(words) else None


def _destructive(sub: str, rest: list[str]) -> bool:
    opts = [a for a in rest if a.startswith("-")]
    if sub == "reset":
        return "--hard" in rest or "--merge" in rest
    if sub == "checkout":
        return "--" in rest or "." in rest or "-f" in opts or "--force" in opts
    if sub == "restore":
        return "--staged" not in rest or "--worktree" in rest
    if sub == "clean":
        return any(o == "--force" or (not o.startswith("--") and "f" in o) for o in opts)
    if sub == "push":
        forced = {"-f", "--force", "--force-with-lease", "--mirror", "--delete", "-d"}
        return any(o.split("=", 1)[0] in forced for o in opts) or any(
            a.startswith("+") for a in rest
        )
    if sub == "stash":
        return bool(rest) and rest[0] in ("drop", "clear")
    if sub == "branch":
        return "-D" in opts or ("--delete" in opts and "--force" in opts)
    return False


def is_destructive_git(command: str) -> bool:
    """Does the line discard work git cannot give back (reset --hard, clean -f, push -f…)?"""
    for cmd in parse_command(command) or []:
        readings = deny_readings(cmd)
        candidates: list[Sequence[str]] = [peel(cmd)]
        candidates += readings if readings != "unknown" else []
        for words in candidates:
            found = _git_subcommand(words)
            if found is not None and _destructive(*found):
                return True
    return False


def _control_plane_target(command: str, ctx: ToolContext) -> str | None:
    roots = [canonical(ctx.cwd), *(canonical(d) for d in ctx.allowed_dirs)]
    for target in redirect_targets(command):
        path = Path(os.path.expanduser(target))
        if not path.is_absolute():
            path = ctx.cwd / path
        if is_control_plane(canonical(path), roots):
            return target
    return None


def _shown(command: str) -> list[ToolContent]:
    return [TextToolContent(text=f"$ {visible(command)}")]


def sandbox_problem(ctx: ToolContext) -> str | None:
    """Why Bash would run unconfined, or None when the sandbox is on."""
    if not ctx.config.sandbox:
        return None  # the user turned it off on purpose
    sandbox = ctx.config.shell_sandbox
    if sandbox is None:
        return "no shell sandbox is configured"
    return None if sandbox.active else sandbox.problem or "the shell sandbox is unavailable"


async def decide_bash(command: str, data: Any, ctx: ToolContext, rules: RuleSet) -> Decision:
    mode = effective_mode(ctx)
    deny = match_any(rules.deny, command)
    if deny is not None and deny != "unknown":
        return Decision("deny", f"denied by the rule {deny}", str(deny))
    if getattr(data, "dangerously_disable_sandbox", False):
        reason = "this command asks to run outside the shell sandbox"
        return refuse_or_ask(mode, reason, _shown(command))
    target = _control_plane_target(command, ctx)
    if target is not None:
        reason = f"the command writes {target}, a protected configuration file"
        return refuse_or_ask(mode, reason, _shown(command))
    ask = match_any(rules.ask, command)
    if ask == "unknown":
        reason = "the command cannot be checked against the ask rules"
        return Decision("ask", reason, content=_shown(command), forced=True)
    if ask is not None:
        return Decision("ask", f"the rule {ask} asks", str(ask), _shown(command))
    if deny == "unknown":
        reason = "the command cannot be checked against the deny rules (dynamic or unparseable)"
        return refuse_or_ask(mode, reason, _shown(command))
    exact = match_all([r for r in rules.allow if r.spec and "*" not in r.spec], command)
    if is_destructive_git(command) and exact is None:
        return refuse_or_ask(mode, "destructive git commands always ask", _shown(command))
    read_only = is_read_only_command(command)
    if mode == "plan" and not read_only:
        return Decision(
            "deny", "plan mode is read-only: present the plan instead of acting", by_mode=True
        )
    problem = sandbox_problem(ctx)
    if problem is not None and not read_only and mode != "bypassPermissions":
        if mode == "dontAsk":
            return Decision("deny", f"dontAsk mode and no sandbox ({problem})", by_mode=True)
        note = f"The shell sandbox is off ({problem}): this command would run unconfined."
        return Decision("ask", note, content=_shown(command), forced=True)
    allow = match_all(rules.allow, command)
    if allow is not None:
        return Decision("allow", f"allowed by the rule {allow}", str(allow))
    if read_only:
        return Decision("allow", "read-only command")
    if mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode")
    if mode == "dontAsk":
        return Decision("deny", "dontAsk mode denies what is not allowed by a rule", by_mode=True)
    return Decision("ask", "", content=_shown(command))


def suggest_bash_rule(command: str) -> str:
    """A prefix rule for one plain command; the exact line for anything else."""
    parsed = parse_command(command)
    if not parsed or len(parsed) != 1:
        return f"Bash({command})"
    cmd = parsed[0]
    words = list(cmd.argv)
    if cmd.assignments or writes_by_redirect(cmd) or runs_through_args(words) or not words:
        return f"Bash({command})"
    prefix = words[:2] if len(words) > 1 and not words[1].startswith("-") else words[:1]
    if any(c in w for w in prefix for c in "$`*?[()"):
        return f"Bash({command})"
    return f"Bash({' '.join(prefix)}:*)"
