"""Token and cost accounting for a session and its current turn.

A subagent's meter has its parent's as ``parent``: what the subagent spends counts for the
parent's turn and session too, so ``--max-budget-usd`` covers the whole tree of agents."""

from __future__ import annotations

from tether.protocol.updates import Usage, UsageUpdate
from tether.providers.base import TokenUsage
from tether.providers.pricing import cost_usd


class UsageMeter:
    def __init__(self, model: str, context_window: int, parent: UsageMeter | None = None) -> None:
        self.parent = parent
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
        self._count(response)
        self.context_tokens = usage.context_tokens + usage.output_tokens
        return UsageUpdate(
            **self.turn.model_dump(),
            context_tokens=self.context_tokens,
            context_window=self.context_window,
        )

    def _count(self, response: Usage) -> None:
        self.turn = self.turn.plus(response)
        self.session = self.session.plus(response)
        if self.parent is not None:
            self.parent._count(response)

    def spent_usd(self) -> float | None:
        """What the whole session has cost so far, its subagents included."""
        root = self
        while root.parent is not None:
            root = root.parent
        return root.session.cost_usd

    def budget_exhausted(self, max_budget_usd: float | None) -> bool:
        spent = self.spent_usd()
        if max_budget_usd is None or spent is None:
            return False
        return spent >= max_budget_usd
