"""Why a turn ended, and what a client is told: the one table from the engine's terminal
reasons (kept in transcripts as ``turn_end.reason``) to the wire's ``stopReason``. The
engine reports with it live; the transcript replay reports with it on load."""

from __future__ import annotations

from typing import Literal

from tether.protocol.updates import StopReason

TerminalReason = Literal[
    "completed",
    "max_turns",
    "aborted",
    "prompt_too_long",
    "model_error",
    "hook_stopped",
    "budget_exhausted",
    "max_tokens",
    "refusal",
    "transcript_error",
]

STOP_REASONS: dict[TerminalReason, StopReason] = {
    "completed": "end_turn",
    "max_turns": "max_turn_requests",
    "aborted": "cancelled",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "prompt_too_long": "error",
    "model_error": "error",
    "hook_stopped": "error",
    "budget_exhausted": "error",
    "transcript_error": "error",
}


def stop_reason(reason: str) -> StopReason:
    """The wire's stop reason for a terminal reason; one this Tether does not know (a
    newer writer's) is an error."""
    return _BY_NAME.get(reason, "error")


_BY_NAME: dict[str, StopReason] = {k: v for k, v in STOP_REASONS.items()}
