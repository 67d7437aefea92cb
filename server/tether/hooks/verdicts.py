"""What the outcomes of an event's hooks add up to, the way Claude Code combines them: any
block wins; for PreToolUse deny > ask > allow; context texts are joined; any
``continue: false`` ends the turn. Shared by every source of hooks (settings commands, an
SDK program's callbacks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.core.hooks import PromptHookVerdict, StopHookVerdict, ToolHookVerdict
from tether.hooks.outcome import HookOutcome, joined, strongest


def _stop(outcomes: Sequence[HookOutcome]) -> str | None:
    return next((o.stop for o in outcomes if o.stop), None)


def pre_tool_verdict(outcomes: Sequence[HookOutcome]) -> ToolHookVerdict:
    if not outcomes:
        return ToolHookVerdict()
    blocked = [o.reason for o in outcomes if o.blocked and o.permission is None]
    decision = "deny" if blocked else strongest([o.permission for o in outcomes])
    reasons = blocked or [o.permission_reason for o in outcomes if o.permission == decision]
    updated = next((o.updated_input for o in outcomes if o.updated_input is not None), None)
    return ToolHookVerdict(
        decision=decision,
        reason=joined(list(reasons)) or "",
        updated_input=updated,
        stop_turn=_stop(outcomes),
        additional_context=joined([o.context for o in outcomes]),
    )


def post_tool_verdict(outcomes: Sequence[HookOutcome]) -> ToolHookVerdict:
    # A block after the fact cannot undo the call: its reason goes to the model.
    feedback = [f"PostToolUse hook: {o.reason}" for o in outcomes if o.blocked]
    return ToolHookVerdict(
        stop_turn=_stop(outcomes),
        additional_context=joined([*feedback, *(o.context for o in outcomes)]),
        updated_output=_last([o.updated_output for o in outcomes]),
        updated_mcp_output=_last([o.updated_mcp_output for o in outcomes]),
    )


def _last(values: Sequence[Any]) -> Any:
    """The last hook's rewrite of a result wins (they are read in configuration order)."""
    return next((v for v in reversed(values) if v is not None), None)


def prompt_verdict(
    outcomes: Sequence[HookOutcome], context: Sequence[str | None] = ()
) -> PromptHookVerdict:
    block = next((o.reason or "blocked by a hook" for o in outcomes if o.blocked), None)
    return PromptHookVerdict(
        block_reason=block or _stop(outcomes),
        additional_context=joined([*context, *(o.context for o in outcomes)]),
    )


def stop_verdict(outcomes: Sequence[HookOutcome]) -> StopHookVerdict:
    stop = _stop(outcomes)
    if stop is not None:
        return StopHookVerdict(stop_turn=stop)
    block = joined([o.reason or "a Stop hook asked to continue" for o in outcomes if o.blocked])
    return StopHookVerdict(block_reason=block)


def compact_block(outcomes: Sequence[HookOutcome]) -> str | None:
    return joined([o.reason or "blocked by a PreCompact hook" for o in outcomes if o.blocked])


def session_context(outcomes: Sequence[HookOutcome]) -> str | None:
    return joined([o.context for o in outcomes])
