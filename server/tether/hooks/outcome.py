"""What one hook run says, in Claude Code's contract.

- exit 0: stdout is read as JSON when it starts with ``{``; otherwise it is plain text
  (added to the context for UserPromptSubmit and SessionStart, logged for the rest).
- exit 2: blocking; stderr is the reason, and JSON on stdout cannot undo it.
- any other exit, a timeout, a failure to start: a non-blocking error, logged.

JSON fields: ``continue`` (false ends the turn, with ``stopReason``), ``decision``
(``block``/``approve``) with ``reason``, ``systemMessage``, and ``hookSpecificOutput``
with ``permissionDecision`` (allow/ask/deny), ``permissionDecisionReason``,
``updatedInput``, ``additionalContext`` and, after a call, ``updatedToolOutput`` /
``updatedMCPToolOutput``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from tether.core.hooks import HookNotice
from tether.core.json_input import parse_json
from tether.hooks.runner import HookRun

log = logging.getLogger(__name__)

Permission = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class HookOutcome:
    blocked: bool = False
    """Exit 2, or ``decision: "block"``."""
    reason: str = ""
    stop: str | None = None
    """``continue: false``: end the turn, with this message."""
    permission: Permission | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str | None = None
    """Text for the model (additionalContext, or plain stdout where that counts)."""
    failed: str | None = None
    """A non-blocking error worth telling the user about."""
    system_message: str | None = None
    """``systemMessage``: shown to the user."""
    updated_output: Any = None
    """PostToolUse ``updatedToolOutput``: what the model reads in place of the result."""
    updated_mcp_output: Any = None
    """PostToolUse ``updatedMCPToolOutput``: the same, for MCP tools only."""


_PERMISSIONS: dict[str, Permission] = {
    "allow": "allow",
    "ask": "ask",
    "deny": "deny",
    "approve": "allow",
    "block": "deny",
}


def _json(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = parse_json(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None  # pyright: ignore[reportUnknownVariableType]


def read_outcome(run: HookRun, *, plain_stdout_is_context: bool = False) -> HookOutcome:
    if run.exit_code == 2:
        return HookOutcome(blocked=True, reason=run.stderr.strip() or "blocked by a hook")
    if run.exit_code != 0:
        why = run.error or f"exit code {run.exit_code}"
        detail = run.stderr.strip()
        log.warning("hook `%s` failed (%s) %s", run.command, why, detail)
        detail = f": {detail[:500]}" if detail else ""
        return HookOutcome(failed=f"hook `{run.command}` failed ({why}){detail}")
    data = _json(run.stdout)
    if data is None:
        text = run.stdout.strip()
        return HookOutcome(context=text or None) if plain_stdout_is_context else HookOutcome()
    specific: Any = data.get("hookSpecificOutput")
    spec: dict[str, Any] = specific if isinstance(specific, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    decision = data.get("decision")
    permission = _PERMISSIONS.get(str(spec.get("permissionDecision") or ""))
    if permission is None and decision in ("approve", "block"):
        permission = _PERMISSIONS[decision]
    updated: Any = spec.get("updatedInput")
    context: Any = spec.get("additionalContext")
    stop = None
    if data.get("continue") is False:
        stop = str(data.get("stopReason") or "a hook ended the turn")
    reason = str(data.get("reason") or spec.get("permissionDecisionReason") or "")
    return HookOutcome(
        blocked=decision == "block",
        reason=reason,
        stop=stop,
        permission=permission,
        permission_reason=str(spec.get("permissionDecisionReason") or data.get("reason") or ""),
        updated_input=updated if isinstance(updated, dict) else None,  # pyright: ignore[reportUnknownArgumentType]
        context=context if isinstance(context, str) and context else None,
        system_message=str(data["systemMessage"]) if data.get("systemMessage") else None,
        updated_output=spec.get("updatedToolOutput"),
        updated_mcp_output=spec.get("updatedMCPToolOutput"),
    )


def strongest(permissions: list[Permission | None]) -> Permission | None:
    """When hooks disagree: deny > ask > allow."""
    for level in ("deny", "ask", "allow"):
        if level in permissions:
            return level
    return None


def joined(parts: list[str | None]) -> str | None:
    text = "\n".join(p for p in parts if p)
    return text or None


class HookNotices:
    """What hook runs have to tell the user (a ``systemMessage``, a failure), kept until
    the engine takes them to show as notices."""

    def __init__(self) -> None:
        self._notices: list[HookNotice] = []

    def note(self, event: str, outcomes: list[HookOutcome], subject: str | None = None) -> None:
        """``subject``: the tool (or source, trigger) the event was about."""
        label = f"{event}:{subject}" if subject else event
        for o in outcomes:
            if o.failed:
                self._notices.append(HookNotice("warning", f"{label} {o.failed}"))
            if o.system_message:
                self._notices.append(HookNotice("info", f"{label} says: {o.system_message}"))

    def drain(self) -> list[HookNotice]:
        notices, self._notices = self._notices, []
        return notices
