"""Streaming tool execution: calls start as soon as their blocks are complete.

While the model is still streaming, a concurrency-safe call starts at once if everything
running is concurrency-safe too (at most ``MAX_CONCURRENCY``); anything else waits until
the stream has ended and the calls before it have finished. This is the greedy batching of
``batching.partition`` applied incrementally. Results come back in call order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from tether.core.messages import INTERRUPTED_TOOL_RESULT, ToolUseBlock
from tether.orchestration.batching import MAX_CONCURRENCY
from tether.orchestration.pipeline import ToolOutcome
from tether.tools.base import error_result

log = logging.getLogger(__name__)

CallState = Literal["queued", "running", "done"]


@dataclass
class _Call:
    use: ToolUseBlock
    safe: bool
    state: CallState = "queued"
    task: asyncio.Task[ToolOutcome] | None = None
    outcome: ToolOutcome | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class StreamingToolExecutor:
    def __init__(
        self,
        run: Callable[[ToolUseBlock], Awaitable[ToolOutcome]],
        is_safe: Callable[[ToolUseBlock], bool],
        *,
        on_start: Callable[[ToolUseBlock], None] | None = None,
        on_finish: Callable[[ToolUseBlock, ToolOutcome], None] | None = None,
        max_concurrency: int = MAX_CONCURRENCY,
    ) -> None:
        self._run = run
        self._is_safe = is_safe
        self._on_start = on_start
        self._on_finish = on_finish
        self._max = max_concurrency
        self._calls: list[_Call] = []
        self._streaming = True
        self.max_running_seen = 0

    def add(self, use: ToolUseBlock) -> None:
        """A tool_use block is complete (possibly while the model still streams)."""
        self._calls.append(_Call(use, self._is_safe(use)))
        self._pump()

    def stream_ended(self) -> None:
        self._streaming = False
        self._pump()

    @property
    def calls(self) -> list[ToolUseBlock]:
        return [c.use for c in self._calls]

    def _running(self) -> list[_Call]:
        return [c for c in self._calls if c.state == "running"]

    def _pump(self) -> None:
        for call in self._calls:
            if call.state != "queued":
                continue
            running = self._running()
            if call.safe:
                if any(not r.safe for r in running) or len(running) >= self._max:
                    return
            elif self._streaming or running:
                return
            self._start(call)
            if not call.safe:
                return

    def _start(self, call: _Call) -> None:
        call.state = "running"
        self.max_running_seen = max(self.max_running_seen, len(self._running()))
        if self._on_start is not None:
            self._on_start(call.use)
        call.task = asyncio.get_running_loop().create_task(self._drive(call))

    async def _drive(self, call: _Call) -> ToolOutcome:
        try:
            outcome = await self._run(call.use)
        except asyncio.CancelledError:
            outcome = ToolOutcome(error_result(INTERRUPTED_TOOL_RESULT).to_block(call.use.id))
            self._settle(call, outcome)
            raise
        except Exception as e:  # a bug in the pipeline must not hang the turn
            log.exception("tool call %s crashed the pipeline", call.use.name)
            outcome = ToolOutcome(error_result(f"internal error: {e}").to_block(call.use.id))
        self._settle(call, outcome)
        self._pump()
        return outcome

    def _settle(self, call: _Call, outcome: ToolOutcome) -> None:
        call.outcome = outcome
        call.state = "done"
        call.done.set()
        if self._on_finish is not None:
            self._on_finish(call.use, outcome)

    async def results(self) -> list[ToolOutcome]:
        """Wait for every call (after ``stream_ended``); outcomes in call order."""
        self.stream_ended()
        for call in self._calls:
            await call.done.wait()
        return [c.outcome for c in self._calls if c.outcome is not None]

    async def cancel(self) -> list[ToolOutcome]:
        """Stop everything: running calls are cancelled (and awaited), queued ones never
        start. Every call gets an outcome; the unfinished say they were interrupted."""
        self._streaming = False
        running = [c.task for c in self._calls if c.state == "running" and c.task is not None]
        for task in running:
            task.cancel()
        for task in running:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for call in self._calls:
            if call.state == "queued":
                self._settle(
                    call, ToolOutcome(error_result(INTERRUPTED_TOOL_RESULT).to_block(call.use.id))
                )
        return [c.outcome for c in self._calls if c.outcome is not None]

    async def discard(self) -> None:
        """The stream was reset: forget every call (only read-only ones can have started)."""
        await self.cancel()
        self._calls.clear()
        self._streaming = True
