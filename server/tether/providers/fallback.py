"""``--fallback-model``: when the main model is overloaded, ask another one.

A request goes to the main model first. If it fails before the first event with a fault
that another model may not have (overloaded, rate limited, the server failing) after the
main provider's own retries, the same request goes to the fallback model. A request that
failed after streaming began is not repeated elsewhere: its events are already out. The
next request tries the main model again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from tether.errors import ModelError, PromptTooLongError
from tether.providers.base import ModelRequest, Provider, Retrying, StreamEvent, Waiting
from tether.providers.models import ModelLimits

FALLBACK_STATUSES = frozenset({429, 500, 502, 503, 504, 529})


class FallbackProvider:
    """The main provider, with a second one for requests the first cannot serve."""

    def __init__(
        self,
        main: Provider,
        fallback: Provider,
        *,
        on_fallback: Callable[[str], None] | None = None,
    ) -> None:
        self.main = main
        self.fallback = fallback
        self._on_fallback = on_fallback

    @property
    def name(self) -> str:
        return self.main.name

    @property
    def model(self) -> str:
        return self.main.model

    @property
    def context_window(self) -> int:
        # The history must fit either model.
        return min(self.main.context_window, self.fallback.context_window)

    @property
    def limits(self) -> ModelLimits:
        # Requests are built for the main model; the history and the output must fit both.
        main, other = self.main.limits, self.fallback.limits
        return replace(
            main,
            window=min(main.window, other.window),
            max_output=min(main.max_output, other.max_output),
            default_output=min(main.default_output, other.default_output),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        started = False
        try:
            events = self.main.stream(request)
            try:
                async for event in events:
                    started = started or not isinstance(event, Retrying | Waiting)
                    yield event
            finally:
                await _close(events)
            return
        except PromptTooLongError:
            raise
        except ModelError as e:
            if started or e.status not in FALLBACK_STATUSES:
                raise
            reason = str(e)
        if self._on_fallback is not None:
            self._on_fallback(f"{self.main.model} failed ({reason}); using {self.fallback.model}")
        events = self.fallback.stream(replace(request, model=self.fallback.model))
        try:
            async for event in events:
                yield event
        finally:
            await _close(events)

    async def discover_window(self, *, again: bool = False) -> None:
        await self.main.discover_window(again=again)
        await self.fallback.discover_window(again=again)

    async def aclose(self) -> None:
        await self.main.aclose()
        await self.fallback.aclose()


async def _close(events: AsyncIterator[StreamEvent]) -> None:
    """Close a provider's stream now (its HTTP response with it), not when it is collected."""
    close: Any = getattr(events, "aclose", None)
    if close is not None:
        await close()
