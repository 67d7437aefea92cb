"""The permission decision for a Bash call, in this order::

deny rules (any reading of any subcommand)        -> deny
dangerouslyDisableSandbox                         -> the user decides, every time
a write into the control plane                    -> the user decides, every time
git made to run a program the line chooses        -> the user decides, every time
Read/Edit deny rules on the line's paths          -> deny
ask rules (Bash, then Read/Edit on paths)         -> ask
a command the deny rules cannot be checked on     -> the user decides
destructive git (unless an exact allow rule)      -> the user decides, even in acceptEdits
plan mode and not read-only                       -> deny
no sandbox and not read-only                      -> the user decides (allow rules too)
every subcommand covered                          -> allow
acceptEdits: the rest are file commands inside    -> allow
the mode's default

A subcommand is covered by an allow rule, or by being read-only with every path it reads
inside the workspace (``bash_paths``) or allowed by a ``Read(…)`` rule — so ``cat`` of a
file outside asks, as the Read tool would refuse it. In acceptEdits, ``mkdir``, ``touch``,
``mv``, ``cp``, ``rm``, ``rmdir`` and ``sed -i`` whose every path is inside the workspace
and outside the control plane are allowed too.
"""

from __future__ import annotations

from typing import Any

from tether.permissions.bash_destructive import is_destructive_git
from tether.permissions.bash_gitconfig import git_runs
from tether.permissions.bash_paths import CommandPaths, Seen, line_paths
from tether.permissions.bash_rules import covering_rules, exact_line, match_any
from tether.permissions.bash_suggest import suggest_bash_rule
from tether.permissions.decision import Decision, RuleSet, effective_mode, refuse_or_ask
from tether.permissions.display import visible
from tether.permissions.rules import Rule, Subject, matches, tool_matches
from tether.permissions.shell import Script, parse_script
from tether.protocol.content import TextToolContent, ToolContent
from tether.tools.context import ToolContext

__all__ = [
    "decide_bash",
    "is_destructive_git",
    "sandbox_problem",
    "suggest_bash_rule",
    "suggest_for_bash",
]


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


def _path_rule(rules: list[Rule], views: list[CommandPaths], ctx: ToolContext) -> Rule | None:
    """The first Read rule matching a path the line reads, or Edit rule one it writes."""
    readers = [r for r in rules if r.spec is not None and tool_matches(r, "Read")]
    editors = [r for r in rules if r.spec is not None and tool_matches(r, "Edit")]
    if not readers and not editors:
        return None
    for view in views:
        pairs = [(readers, "Read", s) for s in view.reads]
        pairs += [(editors, "Edit", s) for s in view.writes]
        for candidates, tool, seen in pairs:
            paths = {p for p in (seen.path, seen.written) if p is not None}
            # A directory is read (or removed) with what is in it: `grep -r x secrets`.
            paths |= {p / "*" for p in paths if candidates and p.is_dir()}
            for rule in candidates:
                if any(matches(rule, Subject(tool, str(p), ctx.cwd, ctx.home)) for p in paths):
                    return rule
    return None


def _read_allowed(seen: Seen, rules: list[Rule], ctx: ToolContext) -> bool:
    """Is an outside read allowed by a ``Read(path)`` allow rule?"""
    if seen.path is None or seen.why is not None:
        return False
    subject = Subject("Read", str(seen.path), ctx.cwd, ctx.home)
    return any(r.spec is not None and matches(r, subject) for r in rules)


def _covered(
    view: CommandPaths, rule: Rule | None, rules: list[Rule], ctx: ToolContext
) -> Rule | bool:
    """The allow rule covering this subcommand, True when it is a confined reader."""
    if rule is not None:
        return rule
    if view.effects.read_only:
        return all(_read_allowed(s, rules, ctx) for s in view.outside)
    return False


def _outside_reason(views: list[CommandPaths]) -> str:
    for view in views:
        for seen in view.outside:
            name = view.cmd.argv[0] if view.cmd.argv else "the command"
            if seen.path is None:
                return f"{name} uses a path decided at run time ({seen.text})"
            if seen.why is not None:
                return seen.why
            return f"{name} reads {seen.path}, outside the workspace"
    return ""


async def decide_bash(command: str, data: Any, ctx: ToolContext, rules: RuleSet) -> Decision:
    mode = effective_mode(ctx)
    deny = match_any(rules.deny, command)
    if deny is not None and deny != "unknown":
        return Decision("deny", f"denied by the rule {deny}", str(deny))
    if getattr(data, "dangerously_disable_sandbox", False):
        reason = "this command asks to run outside the shell sandbox"
        return refuse_or_ask(mode, reason, _shown(command))
    script: Script | None = parse_script(command)
    views = line_paths(script, ctx) if script is not None else []
    control = next((c for v in views for c in v.control), None)
    if control is not None:
        reason = f"the command writes {control}, a protected configuration file"
        return refuse_or_ask(mode, reason, _shown(command))
    runs = git_runs(script) if script is not None else None
    if runs is not None:
        return refuse_or_ask(mode, runs, _shown(command))
    denied = _path_rule(rules.deny, views, ctx)
    if denied is not None:
        return Decision("deny", f"denied by the rule {denied}", str(denied))
    ask = match_any(rules.ask, command)
    if ask == "unknown":
        reason = "the command cannot be checked against the ask rules"
        return Decision("ask", reason, content=_shown(command), forced=True)
    ask = ask or _path_rule(rules.ask, views, ctx)
    if ask is not None:
        return Decision("ask", f"the rule {ask} asks", str(ask), _shown(command))
    if deny == "unknown":
        reason = "the command cannot be checked against the deny rules (dynamic or unparseable)"
        return refuse_or_ask(mode, reason, _shown(command))
    exact = exact_line(rules.allow, command)
    if is_destructive_git(command) and (exact is None or exact.spec is None):
        return refuse_or_ask(mode, "destructive git commands always ask", _shown(command))
    understood = script is not None and script.hazard is None and bool(views)
    read_only = understood and all(v.effects.read_only for v in views)
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
    if exact is not None:
        return Decision("allow", f"allowed by the rule {exact}", str(exact))
    covered: list[Rule | bool] = []
    if understood:
        hits = covering_rules(rules.allow, [v.cmd for v in views])
        covered = [_covered(v, hit, rules.allow, ctx) for v, hit in zip(views, hits, strict=True)]
    if understood and all(covered):
        rule = next((c for c in covered if isinstance(c, Rule)), None)
        if rule is not None:
            return Decision("allow", f"allowed by the rule {rule}", str(rule))
        return Decision("allow", "read-only command")
    edits = understood and all(c or v.edit_inside for c, v in zip(covered, views, strict=True))
    if mode == "acceptEdits" and edits:
        return Decision("allow", "acceptEdits mode: file commands inside the workspace")
    if mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode")
    if mode == "dontAsk":
        return Decision("deny", "dontAsk mode denies what is not allowed by a rule", by_mode=True)
    return Decision("ask", _outside_reason(views), content=_shown(command))


def suggest_for_bash(command: str, ctx: ToolContext) -> str | None:
    """The rule an "always" answer saves: ``Read(//path)`` when a reader asked only because
    of the one file it reads outside the workspace, else ``suggest_bash_rule``."""
    script = parse_script(command)
    if script is not None and script.hazard is None:
        views = line_paths(script, ctx)
        if views and all(v.effects.read_only for v in views):
            outside = {s.path for v in views for s in v.outside if s.why is None}
            if len(outside) == 1 and all(len(v.outside) <= 1 for v in views):
                (path,) = outside
                if path is not None and " " not in str(path):
                    return f"Read(//{str(path).lstrip('/')})"
    return suggest_bash_rule(command, ctx.config.caller_env)
