"""Which hosts a sandboxed command may reach: the settings' lists, the ``Network`` rules,
the mode, then the user, asked while the connection waits.

Order, as for tool calls (``policy.py``):

    sandbox.network.deniedDomains, deny rules Network(domain:…)  -> deny
    ask rules Network(domain:…)                                   -> ask
    sandbox.network.allowedDomains, allow rules                   -> allow
    bypassPermissions                                             -> allow
    dontAsk, plan                                                 -> deny
    otherwise                                                     -> ask

A question names the host and port, the command, the registries the project's files point
to (offered, never allowed because of it), and the rule an "always" answer saves:
``Network(domain:HOST)`` (every port of that host; a rule may name one: ``HOST:443``). "Once"
lasts the rest of the command (the proxy asks once per destination); a failed or cancelled
question is a refusal.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from tether.editor.port import Editor, PermissionOption, PermissionRequest
from tether.network.hosts import Verdict, first_match, host_matches, normal_host, valid_pattern
from tether.network.registries import suggested_hosts
from tether.permissions.decision import RuleSet
from tether.permissions.display import visible
from tether.permissions.rules import Rule
from tether.protocol.content import TextToolContent
from tether.protocol.updates import Mode
from tether.tools.context import SessionRunState, ToolConfig

log = logging.getLogger(__name__)

TOOL = "Network"
SUGGESTED = 6
Remember = Callable[[Literal["allow", "deny"], str], None]
"""Saves an "always" answer: ``("allow" | "deny", rule)``."""


def network_rule(host: str) -> str:
    host = f"[{host}]" if ":" in host else host
    return f"{TOOL}(domain:{host})"


def _pattern(rule: Rule) -> str | None:
    if rule.tool != TOOL:
        return None
    spec = rule.spec or ""
    if not spec.startswith("domain:"):
        return None
    pattern = spec.removeprefix("domain:")
    return pattern if valid_pattern(pattern) is None else None


def _rule_match(rules: Sequence[Rule], host: str, port: int) -> Rule | None:
    for rule in rules:
        if rule.tool == TOOL and rule.spec is None:
            return rule  # a bare ``Network``: every host
        pattern = _pattern(rule)
        if pattern is not None and host_matches(pattern, host, port):
            return rule
    return None


def settled(
    host: str,
    port: int,
    rules: RuleSet,
    allowed: Sequence[str],
    denied: Sequence[str],
    mode: Mode,
) -> Verdict | None:
    """The decision rules, settings and mode make, or None: the user is asked."""
    if (pattern := first_match(denied, host, port)) is not None:
        return Verdict(False, f"denied by sandbox.network.deniedDomains {pattern}")
    if (rule := _rule_match(rules.deny, host, port)) is not None:
        return Verdict(False, f"denied by the rule {rule}")
    asks = _rule_match(rules.ask, host, port) is not None
    if not asks and first_match(allowed, host, port) is not None:
        return Verdict(True, "allowed by sandbox.network.allowedDomains")
    if not asks and (rule := _rule_match(rules.allow, host, port)) is not None:
        return Verdict(True, f"allowed by the rule {rule}")
    if mode == "bypassPermissions" and not asks:
        return Verdict(True, "bypassPermissions mode")
    if mode in ("dontAsk", "plan"):
        return Verdict(False, f"{mode} mode: nobody is asked")
    return None


_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
"""Names Debian's and Fedora's /etc/hosts give to loopback."""


def _local(host: str) -> bool:
    host = normal_host(host)
    if host in _LOOPBACK_NAMES or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return (
        address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified
    )


REJECT_REST = PermissionOption(
    "reject_command", "Reject every other host this command asks for", "reject_once"
)


@dataclass
class CommandQuestions:
    """One command's questions: one open at a time (a command reaching 40 hosts at once
    asks them in turn), and whether the user rejected the rest."""

    turn: asyncio.Lock = field(default_factory=asyncio.Lock)
    rejected_rest: bool = False


@dataclass
class HostQuestions:
    """Decides for the commands of one tool call (``Decide``)."""

    editor: Editor
    session_id: str
    tool_call_id: str
    state: SessionRunState
    config: ToolConfig
    root: Path
    """The workspace, whose files may name the registries it uses (``registries.py``)."""
    rules: RuleSet
    remember: Remember | None
    command: str = ""
    questions: CommandQuestions = field(default_factory=CommandQuestions)

    def for_command(self, command: str) -> HostQuestions:
        return replace(self, command=command, questions=CommandQuestions())

    async def __call__(self, host: str, port: int) -> Verdict:
        if (verdict := self._settled(host, port)) is not None:
            return verdict
        async with self.questions.turn:
            # an answer given meanwhile ("always", "reject the rest") may settle this one
            if (verdict := self._settled(host, port)) is not None:
                return verdict
            if self.questions.rejected_rest:
                return Verdict(False, "user rejected every other host of this command")
            return await self._ask(host, port)

    def _settled(self, host: str, port: int) -> Verdict | None:
        cfg = self.config
        mode = self.state.mode
        if mode == "bypassPermissions" and cfg.bypass_disabled:
            mode = "default"
        return settled(host, port, self.rules, cfg.network_allowed, cfg.network_denied, mode)

    async def _ask(self, host: str, port: int) -> Verdict:
        rule = network_rule(host)
        where = f"{host}:{port}"
        text = [f"A sandboxed command wants to connect to {where}."]
        if self.command:
            text.append(f"Command: {visible(self.command)}")
        if _local(host):
            text.append(
                f"{host} is this machine or its local network: allowing it lets the command "
                "reach the services listening there, outside the sandbox."
            )
        text.append(f'"Always" saves the rule {rule} (every port of {host}).')
        offered = await asyncio.to_thread(suggested_hosts, self.root)
        if offered:
            named = ", ".join(f"{s.host} ({s.because})" for s in offered[:SUGGESTED])
            text.append(
                f"This project's files point to these registries: {visible(named)}. To allow "
                "them ahead, list them in sandbox.network.allowedDomains."
            )
        request = PermissionRequest(
            session_id=self.session_id,
            tool_call_id=self.tool_call_id,
            tool_name=TOOL,
            title=f"Connect to {visible(where)}",
            tool_kind="fetch",
            raw_input={"host": host, "port": port, "command": self.command},
            content=[TextToolContent(text="\n".join(text))],
            always_rule=rule,
            more_options=(REJECT_REST,),
        )
        try:
            reply = await self.editor.ask_permission(request)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # an editor that cannot answer is a refusal, never a hang
            log.warning("network question failed: %s", e)
            return Verdict(False, "the question could not be asked")
        option = reply.option
        if option is not None and option.rule is not None and self.remember is not None:
            if option.kind == "allow_always":
                self.remember("allow", option.rule)
            elif option.kind == "reject_always":
                self.remember("deny", option.rule)
        if reply.allowed:
            return Verdict(True, "user allowed")
        if option == REJECT_REST:
            self.questions.rejected_rest = True
        if option is None:
            return Verdict(False, "the question was cancelled")
        if reply.feedback:
            return Verdict(False, f"denied: {visible(reply.feedback)}")
        return Verdict(False, "user denied")
