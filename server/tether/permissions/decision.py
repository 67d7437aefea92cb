"""The value types of a permission decision: the rule set and the verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from tether.permissions.rules import Rule, tool_matches
from tether.protocol.content import ToolContent
from tether.protocol.updates import Mode
from tether.tools.context import ToolContext


@dataclass(frozen=True)
class Decision:
    behavior: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: str | None = None
    """The rule that decided, if one did (a hook's "allow" cannot override a rule's "ask")."""
    content: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())
    forced: bool = False
    """Only the user can approve this exact call (a control-plane write, leaving plan mode,
    an unsandboxed command): a hook's "allow" does not skip the question and an "always"
    answer is not saved as a rule."""
    by_mode: bool = False
    """A denial that comes from the mode (plan, dontAsk), not from a rule or the tool."""
    plan: str | None = None
    """Set for the plan-approval question (leaving plan mode): the plan to show."""


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

    def replace_with(self, other: RuleSet) -> None:
        """Take ``other``'s rules in place: running sessions hold this very object, so a
        settings change reaches their next tool call."""
        self.allow = list(other.allow)
        self.ask = list(other.ask)
        self.deny = list(other.deny)


def effective_mode(ctx: ToolContext) -> Mode:
    """The session's mode, with bypassPermissions refused when settings disable it."""
    mode = ctx.state.mode
    if mode == "bypassPermissions" and ctx.config.bypass_disabled:
        return "default"
    return mode


def refuse_or_ask(
    mode: Mode, reason: str, content: list[ToolContent] | None = None, *, what: str = ""
) -> Decision:
    """A question only the user can answer; modes that never ask turn it into a denial."""
    if mode == "plan":
        return Decision("deny", f"plan mode is read-only: {what or reason}", by_mode=True)
    if mode == "dontAsk":
        return Decision("deny", f"dontAsk mode: {reason}", by_mode=True)
    return Decision("ask", reason, content=list(content or []), forced=True)
