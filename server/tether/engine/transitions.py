"""Typed outcomes of one loop iteration: a transition to another iteration or a terminal.

No boolean flags or magic strings: the loop returns one of these and the engine reacts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tether.protocol.stop_reasons import STOP_REASONS, TerminalReason
from tether.protocol.updates import StopReason, TurnError


@dataclass(frozen=True)
class Terminal:
    """The turn is over."""

    reason: TerminalReason
    message: str = ""

    @property
    def stop_reason(self) -> StopReason:
        return STOP_REASONS[self.reason]

    @property
    def error(self) -> TurnError | None:
        if self.stop_reason != "error":
            return None
        return TurnError(code=self.reason, message=self.message or self.reason.replace("_", " "))


@dataclass(frozen=True)
class NextTurn:
    """Tool results (and any queued input) go back to the model."""

    kind: Literal["next_turn"] = "next_turn"


@dataclass(frozen=True)
class MaxTokensContinue:
    """The reply stopped at the output limit mid-text: ask the model to resume."""

    attempt: int
    kind: Literal["max_tokens_continue"] = "max_tokens_continue"


@dataclass(frozen=True)
class MaxTokensEscalate:
    """The reply stopped at the default output limit: the turn's next requests ask for the
    model's full output limit (once per turn)."""

    max_tokens: int
    kind: Literal["max_tokens_escalate"] = "max_tokens_escalate"


@dataclass(frozen=True)
class StopHookContinue:
    """A Stop hook refused to let the turn end; its reason goes to the model."""

    reason: str
    kind: Literal["stop_hook_continue"] = "stop_hook_continue"


@dataclass(frozen=True)
class InputInjected:
    """The model was done, but the user sent more while it worked: keep going."""

    count: int
    kind: Literal["input_injected"] = "input_injected"


@dataclass(frozen=True)
class PauseTurnContinue:
    """The provider paused a long server-side tool loop (web search); the request is sent
    again with the paused reply so it goes on."""

    attempt: int
    kind: Literal["pause_turn_continue"] = "pause_turn_continue"


@dataclass(frozen=True)
class CompactRetry:
    """The prompt was too long; the history was compacted and the request is retried."""

    kind: Literal["compact_retry"] = "compact_retry"


@dataclass(frozen=True)
class OutputLowered:
    """The window bounds prompt and reply together and the reply asked for more than the
    prompt left: the request is retried with a smaller ``max_tokens``."""

    max_tokens: int
    kind: Literal["output_lowered"] = "output_lowered"


Transition = (
    NextTurn
    | MaxTokensContinue
    | MaxTokensEscalate
    | StopHookContinue
    | InputInjected
    | CompactRetry
    | OutputLowered
    | PauseTurnContinue
)
Step = Transition | Terminal
