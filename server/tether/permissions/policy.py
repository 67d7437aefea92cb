"""The permission decision for one tool call: hooks aside, rules then mode then the tool.

Order (Claude Code's): deny rules > ask rules > allow rules; if nothing matched, the mode's
default, which for ``default`` is the tool's own ``check_permissions``. ``dontAsk`` turns
every remaining question into a denial; ``bypassPermissions`` allows all but explicit
deny/ask rules; ``plan`` denies anything that is not read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tether.permissions.rules import (
    Rule,
    Subject,
    command_matches,
    matches,
    subcommand_texts,
    tool_matches,
    writes_outside_devnull,
)
from tether.protocol.content import ToolContent
from tether.protocol.updates import Mode
from tether.tools.base import PermissionCheck, Tool
from tether.tools.context import ToolContext
from tether.tools.paths import canonical, is_within

DESTRUCTIVE_GIT = (
    "git reset --hard",
    "git checkout -- .",
    "git checkout .",
    "git clean -f",
    "git clean -fd",
    "git clean -xfd",
    "git push --force",
    "git push -f",
    "git stash drop",
    "git stash clear",
)


@dataclass(frozen=True)
class Decision:
    behavior: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: str | None = None
    content: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())


@dataclass
class RuleSet:
    allow: list[Rule] = field(default_factory=lambda: list[Rule]())
    ask: list[Rule] = field(default_factory=lambda: list[Rule]())
    deny: list[Rule] = field(default_factory=lambda: list[Rule]())

    @classmethod
    def from_strings(
        cls, allow: Sequence[str] = (), ask: Sequence[str] = (), deny: Sequence[str] = ()
    ) -> RuleSet:
        return cls(
            [Rule.parse(r) for r in allow],
            [Rule.parse(r) for r in ask],
            [Rule.parse(r) for r in deny],
        )

    def removes_tool(self, name: str) -> bool:
        """A bare tool name in deny removes the tool from the model's view entirely."""
        return any(r.spec is None and tool_matches(r, name) for r in self.deny)


def _bash_any(rules: list[Rule], command: str) -> Rule | None:
    """A rule that matches the whole command or any of its subcommands."""
    texts = subcommand_texts(command) or []
    for rule in rules:
        if not tool_matches(rule, "Bash"):
            continue
        if rule.spec is None:
            return rule
        if command_matches(rule.spec, command) or any(command_matches(rule.spec, t) for t in texts):
            return rule
    return None


def _bash_all_allowed(rules: list[Rule], command: str) -> Rule | None:
    """The command is allowed only if every subcommand matches an allow rule and it writes
    nowhere through redirections; unparseable commands are never allowed by rule."""
    bash_rules = [r for r in rules if tool_matches(r, "Bash")]
    if not bash_rules:
        return None
    if any(r.spec is None for r in bash_rules):
        return next(r for r in bash_rules if r.spec is None)
    # An exact rule approves exactly that command line, redirections and all.
    exact = next(
        (
            r
            for r in bash_rules
            if r.spec and "*" not in r.spec and command_matches(r.spec, command)
        ),
        None,
    )
    if exact is not None:
        return exact
    texts = subcommand_texts(command)
    if not texts or writes_outside_devnull(command):
        return None
    first: Rule | None = None
    for text in texts:
        hit = next((r for r in bash_rules if r.spec and command_matches(r.spec, text)), None)
        if hit is None:
            return None
        first = first or hit
    return first


def is_destructive_git(command: str) -> bool:
    texts = subcommand_texts(command) or [command]
    return any(t == d or t.startswith(d + " ") for t in texts for d in DESTRUCTIVE_GIT)


async def decide(tool: Tool[Any], data: Any, ctx: ToolContext, rules: RuleSet) -> Decision:
    """Rules, then the mode, then the tool's own check."""
    content = tool.rule_content(data)
    subject = Subject(tool.name, content, ctx.cwd)
    command = content if tool.name == "Bash" and content is not None else None

    deny = _bash_any(rules.deny, command) if command is not None else _first(rules.deny, subject)
    if deny is not None:
        return Decision("deny", f"denied by the rule {deny}", str(deny))
    ask = _bash_any(rules.ask, command) if command is not None else _first(rules.ask, subject)
    if ask is not None:
        return await _with_check(tool, data, ctx, Decision("ask", f"the rule {ask} asks", str(ask)))
    if command is not None and is_destructive_git(command):
        return await _with_check(
            tool, data, ctx, Decision("ask", "destructive git commands always ask")
        )
    allow = (
        _bash_all_allowed(rules.allow, command)
        if command is not None
        else _first(rules.allow, subject)
    )
    if allow is not None:
        return Decision("allow", f"allowed by the rule {allow}", str(allow))
    return await _mode_default(tool, data, ctx, ctx.state.mode)


def _first(rules: list[Rule], subject: Subject) -> Rule | None:
    return next((r for r in rules if matches(r, subject)), None)


async def _with_check(tool: Tool[Any], data: Any, ctx: ToolContext, decision: Decision) -> Decision:
    """Attach the tool's preview (e.g. a diff) to a question decided by a rule."""
    check = await tool.check_permissions(data, ctx)
    if check.behavior == "deny":
        return Decision("deny", check.message or decision.reason)
    return Decision(decision.behavior, decision.reason, decision.rule, check.content)


async def _mode_default(tool: Tool[Any], data: Any, ctx: ToolContext, mode: Mode) -> Decision:
    read_only = tool.is_read_only(data)
    if mode == "plan" and not read_only:
        return Decision("deny", "plan mode is read-only: present the plan instead of acting")
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
        return Decision("deny", "dontAsk mode denies what is not allowed by a rule")
    return Decision("ask", check.message, content=check.content)


def _inside_workspace(tool: Tool[Any], data: Any, ctx: ToolContext) -> bool:
    content = tool.rule_content(data)
    if content is None:
        return False
    path = Path(content)
    if not path.is_absolute():
        path = ctx.cwd / path
    roots = [canonical(ctx.cwd), *(canonical(d) for d in ctx.additional_dirs)]
    return is_within(canonical(path), roots)


def suggest_rule(tool: Tool[Any], data: Any, ctx: ToolContext) -> str:
    """The rule an "always" answer saves: a command prefix for Bash, the file for edits."""
    content = tool.rule_content(data)
    if content is None:
        return tool.name
    if tool.name == "Bash":
        texts = subcommand_texts(content)
        if texts and len(texts) == 1 and not writes_outside_devnull(content):
            words = texts[0].split()
            prefix = words[:2] if len(words) > 1 and not words[1].startswith("-") else words[:1]
            return f"Bash({' '.join(prefix)}:*)"
        return f"Bash({content})"
    path = Path(content)
    try:
        rel = canonical(path if path.is_absolute() else ctx.cwd / path).relative_to(
            canonical(ctx.cwd)
        )
        return f"{tool.name}(/{rel.as_posix()})"
    except ValueError:
        return f"{tool.name}(//{content.lstrip('/')})"
