"""Turns as the LSP front door shows them: every update as ``tether/sessionUpdate`` and a
summary in ``$/progress`` (begin at turn start, a report per tool call, end at turn end),
for prompted turns and for the turns a session starts itself (finished background tasks).
Turns started with standard LSP (code actions, commands) show their task as the title and
each step in words (``ProgressLook``), since that is all such a client sees.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from tether.lsp.server import TetherServer
from tether.lsp.steps import StepNamer
from tether.protocol.updates import (
    SessionUpdate,
    StopReason,
    SubagentActivity,
    ToolCall,
    TurnEnd,
)

if TYPE_CHECKING:
    # The engine stack is imported on first use, after ``initialize`` has been answered.
    from tether.engine.turns import TurnResult
    from tether.session.events import UpdateListener

log = logging.getLogger(__name__)

ProgressToken = int | str

ENDINGS: dict[StopReason, str] = {
    "end_turn": "Done",
    "cancelled": "Stopped",
    "error": "Failed",
    "max_tokens": "Stopped at the output limit",
    "max_turn_requests": "Stopped after too many steps",
    "refusal": "The model declined",
}


@dataclass(frozen=True)
class ProgressLook:
    """How a turn shows in ``$/progress``."""

    title: str = "Tether"
    steps: bool = False
    """Report each step in words ("Reading 3 files") instead of the tool call's title."""


@dataclass
class _Shown:
    """One turn's progress: its token (None: no progress shown) and how it looks."""

    token: ProgressToken | None
    look: ProgressLook = field(default_factory=ProgressLook)
    namer: StepNamer = field(default_factory=StepNamer)


def encode(result: TurnResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stopReason": result.terminal.stop_reason,
        "turnId": result.turn_id,
        "usage": result.usage.to_wire(),
    }
    if result.terminal.error is not None:
        out["error"] = result.terminal.error.to_wire()
    return out


class Updates(Protocol):
    def subscribe(self, listener: UpdateListener) -> Callable[[], None]: ...


class Followed(Protocol):
    """What a connection follows: a session of its own loop, or one a print-mode call of
    the warm daemon runs (``session.hosted.HostedSession``)."""

    @property
    def session_id(self) -> str: ...

    @property
    def events(self) -> Updates: ...

    def cancel(self) -> bool: ...


class TurnPublisher:
    """Follows one session for one connection."""

    def __init__(self, server: TetherServer, session: Followed) -> None:
        self.server = server
        self.session = session
        self._progress: dict[str, _Shown] = {}
        """Turns seen so far and their progress."""
        self._pending: set[asyncio.Task[None]] = set()
        self.stop = session.events.subscribe(self._update)

    async def prompt_turn(
        self,
        token: ProgressToken | None,
        look: ProgressLook | None = None,
        turn_id: str | None = None,
    ) -> str:
        """Get ready for a prompted turn: its id, with progress begun when asked for."""
        turn_id = turn_id or uuid.uuid4().hex[:12]
        look = look or ProgressLook()
        self._progress[turn_id] = _Shown(await self._begin(token, look), look)
        return turn_id

    def _update(self, turn_id: str, update: SessionUpdate) -> None:
        session_id = self.session.session_id
        if self.server.features.session_updates and not isinstance(update, SubagentActivity):
            self.server.protocol.notify(
                "tether/sessionUpdate",
                {"sessionId": session_id, "turnId": turn_id, "update": update.to_wire()},
            )
        if not turn_id:
            return
        if turn_id not in self._progress:
            # A turn the session started by itself: show it like a prompted one.
            self._progress[turn_id] = _Shown(None)
            task = asyncio.get_running_loop().create_task(self._begin_later(turn_id))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        shown = self._progress[turn_id]
        if isinstance(update, TurnEnd):
            self._progress.pop(turn_id, None)
        step = shown.namer.name(update) if shown.look.steps else None
        if shown.token is None:
            return
        progress = self.server.work_done_progress
        if isinstance(update, ToolCall):
            message = step if step is not None else update.title
            progress.report(shown.token, types.WorkDoneProgressReport(message=message))
        elif isinstance(update, TurnEnd):
            ending = ENDINGS[update.stop_reason] if shown.look.steps else update.stop_reason
            progress.end(shown.token, types.WorkDoneProgressEnd(message=ending))

    async def _begin_later(self, turn_id: str) -> None:
        token = await self._begin(None, ProgressLook())
        shown = self._progress.get(turn_id)
        if shown is not None:
            shown.token = token
        elif token is not None:  # the turn ended meanwhile
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd())

    async def _begin(self, token: ProgressToken | None, look: ProgressLook) -> ProgressToken | None:
        progress: Any = self.server.work_done_progress  # pygls leaves its futures untyped
        if token is None and self.server.features.work_done_progress:
            token = f"tether-{uuid.uuid4().hex}"
            try:
                await self.server.request_shielded(progress.create_async(token))
            except Exception as e:
                log.info("work done progress refused: %s", e)
                return None
        if token is None:
            return None
        progress.begin(
            token,
            types.WorkDoneProgressBegin(title=look.title, message="Thinking…", cancellable=True),
        )
        future = progress.tokens.get(token)
        if future is not None:
            loop = asyncio.get_running_loop()
            session = self.session

            def cancelled(_done: Any) -> None:  # the editor's progress "cancel" button
                loop.call_soon_threadsafe(session.cancel)

            future.add_done_callback(cancelled)
        return token

    def end_unfinished(self, turn_id: str) -> None:
        """A prompt failed before its turn ran: close the progress it began."""
        shown = self._progress.pop(turn_id, None)
        if shown is not None and shown.token is not None:
            self.server.work_done_progress.end(shown.token, types.WorkDoneProgressEnd())
