"""The value types of a turn: configuration, result, the running turn and its stream."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from tether.context.compaction import CompactionSettings
from tether.core.messages import Message
from tether.engine.transitions import Terminal
from tether.protocol.content import ContentBlock
from tether.protocol.updates import SessionUpdate, Usage
from tether.transcript.payloads import AttachmentKind

AttachmentSource = Callable[[], Awaitable[list[Message]]]
"""Called at each turn boundary; its messages go to the model as attachments."""
PromptNotes = Callable[[], Awaitable[list[tuple[AttachmentKind, Message]]]]
"""Called when a prompt of the user's joins the conversation; its notes go with it (what
the user undid since the last prompt), each once."""


class EngineEvents(Protocol):
    """What the engine tells whoever runs it, outside of a turn's own stream."""

    def idle_update(self, update: SessionUpdate) -> None:
        """An update while no turn runs (a background task changed)."""
        ...

    def wake(self) -> None:
        """Finished tasks wait to be answered and no turn runs: start one."""
        ...


class NoEvents:
    """For engines nobody follows between turns (subagents, tests)."""

    def idle_update(self, update: SessionUpdate) -> None:
        pass

    def wake(self) -> None:
        pass


@dataclass
class EngineConfig:
    max_turns: int | None = None
    """Model requests per turn before stopping with ``max_turns``."""
    max_budget_usd: float | None = None
    max_tokens_continuations: int = 3
    max_stop_hook_blocks: int = 8
    max_agent_depth: int = 2
    """How deep subagents may nest (a subagent's subagent is depth 2)."""
    subagent_max_turns: int | None = 50
    compaction: CompactionSettings = field(default_factory=CompactionSettings)


@dataclass
class TurnResult:
    turn_id: str
    terminal: Terminal
    usage: Usage
    model_calls: int = 0

    @property
    def stop_reason(self) -> str:
        return self.terminal.stop_reason


@dataclass
class Queued:
    """A prompt sent while a turn runs, waiting for the next boundary."""

    message: Message
    content: list[ContentBlock]
    future: asyncio.Future[TurnResult | None]
    """The result of the turn that consumed it, or ``None``: no turn did (given back)."""
    context: str | None = None
    """What a UserPromptSubmit hook added to it, joined after it."""
    with_tools_only: bool = False
    """Joins only at a boundary where the turn goes on anyway (after tool results), as
    Claude Code folds a prompt; at the turn's end it is given back to run as a turn."""


@dataclass
class Turn:
    turn_id: str
    queue: asyncio.Queue[SessionUpdate | None] = field(
        default_factory=lambda: asyncio.Queue[SessionUpdate | None]()
    )
    task: asyncio.Task[None] | None = None
    waiters: list[asyncio.Future[TurnResult | None]] = field(
        default_factory=lambda: list[asyncio.Future[TurnResult | None]]()
    )
    cancelling: bool = False


class TurnStream:
    """The updates of one running turn. Closing it early cancels the turn cleanly."""

    def __init__(self, turn: Turn) -> None:
        self._turn = turn
        self.turn_id = turn.turn_id

    def __aiter__(self) -> TurnStream:
        return self

    async def __anext__(self) -> SessionUpdate:
        update = await self._turn.queue.get()
        if update is None:
            raise StopAsyncIteration
        return update

    def ready(self) -> bool:
        """The next update is there already: taking it does not wait."""
        return not self._turn.queue.empty()

    async def aclose(self) -> None:
        task = self._turn.task
        if task is not None and not task.done():
            # The consumer went away (e.g. $/cancelRequest): stop the turn, keep history whole.
            if not self._turn.cancelling:
                self._turn.cancelling = True
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
