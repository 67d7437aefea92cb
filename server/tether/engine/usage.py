"""Token and cost accounting for a session and its current turn."""

from __future__ import annotations

from tether.protocol.updates import Usage, UsageUpdate
from tether.providers.base import TokenUsage
from tether.providers.pricing import cost_usd


class UsageMeter:
    def __init__(self, model: str, context_window: int) -> None:
        self.model = model
        self.context_window = context_window
        self.session = Usage()
        self.turn = Usage()
        self.context_tokens = 0

    def start_turn(self) -> None:
        self.turn = Usage()

    def add(self, usage: TokenUsage) -> UsageUpdate:
        """Account one model response; returns the update to publish."""
        response = Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_creation_tokens=usage.cache_creation_tokens,
            cost_usd=cost_usd(self.model, usage),
        )
        self.turn = self.turn.plus(response)
        self.session = self.session.plus(response)
        self.context_tokens = usage.context_tokens + usage.output_tokens
        return UsageUpdate(
            **self.turn.model_dump(),
            context_tokens=self.context_tokens,
            context_window=self.context_window,
        )

    def budget_exhausted(self, max_budget_usd: float | None) -> bool:
        if max_budget_usd is None or self.session.cost_usd is None:
            return False
        return self.session.cost_usd >= max_budget_usd
