"""A turn's answer to "the prompt is too long": compact and retry while that helps.

The provider has already taken the window the refusal named (``providers/windows``); a
refusal that names none still bounds it (``Compactor.refused``). The compaction ladder runs
again (results cut to the window's budget, old results cleared, then a summary) and the
request is retried, as often as each round makes the context smaller. The turn stops, saying
so in numbers, when a compaction cannot make it smaller, when what is left cannot fit the
window (the system prompt and tools alone may not), or when a retry is refused at no smaller
size than the request before it.
"""

from __future__ import annotations

from collections.abc import Callable

from tether.context.compaction import Compactor, Conversation
from tether.engine.transitions import CompactRetry, Step, Terminal
from tether.engine.usage import UsageMeter
from tether.errors import ModelError, PromptTooLongError
from tether.protocol.updates import SessionUpdate


class OverflowRecovery:
    def __init__(self, compactor: Compactor, conversation: Conversation, meter: UsageMeter):
        self.compactor = compactor
        self.conversation = conversation
        self.meter = meter
        self.refusals = 0
        """Requests of this turn the API refused as too long."""
        self._refused_size: int | None = None
        """The size of the last refused request, until a request is accepted."""

    def accepted(self) -> None:
        self._refused_size = None

    async def refused(
        self, error: PromptTooLongError, turn_id: str, emit: Callable[[SessionUpdate], None]
    ) -> Step:
        self.refusals += 1
        compactor, conversation = self.compactor, self.conversation
        size = error.tokens or compactor.context_tokens(conversation)
        previous, self._refused_size = self._refused_size, size
        if previous is not None and size >= previous:
            return Terminal(
                "prompt_too_long",
                f"{error}. Compaction did not make the request smaller ({previous} tokens "
                f"refused before, {size} now)",
            )
        compactor.refused(conversation, error.tokens, error.limit)
        self.meter.context_window = compactor.window(conversation)
        try:
            reduced = await compactor.after_refusal(conversation, turn_id, emit)
        except ModelError as e:
            return Terminal("prompt_too_long", f"{error}; compaction failed too: {e}")
        if reduced.after >= reduced.before or reduced.after > reduced.window:
            return Terminal(
                "prompt_too_long",
                f"{error}. The context cannot be made to fit: about {reduced.after} tokens "
                f"after compaction (from {reduced.before}; the system prompt and tools alone "
                f"take about {reduced.prefix}) for a window of {reduced.window} tokens",
            )
        return CompactRetry()
