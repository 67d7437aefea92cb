"""Turns as the LSP front door shows them: every update as ``tether/sessionUpdate`` and a
summary in ``$/progress`` (begin at turn start, a report per tool call, end at turn end),
for prompted turns and for the turns a session starts itself (finished background tasks).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tether.lsp.server import TetherServer
from tether.protocol.updates import SessionUpdate, ToolCall, TurnEnd

if TYPE_CHECKING:
    # The engine stack is imported on first use, after ``initialize`` has been answered.
    from tether.engine.turns import TurnResult
    from tether.session.session import Session

log = logging.getLogger(__name__)

ProgressToken = int | str


def encode(result: TurnResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stopReason": result.terminal.stop_reason,
        "turnId": result.turn_id,
        "usage": result.usage.to_wire(),
    }
    if result.terminal.error is not None:
        out["error"] = result.terminal.error.to_wire()
    return out


class TurnPublisher:
    """Follows one session for one connection."""

    def __init__(self, server: TetherServer, session: Session) -> None:
        self.server = server
        self.session = session
        self._progress: dict[str, ProgressToken | None] = {}
        """Turns seen so far and their progress token (None: no progress shown)."""
        self._pending: set[asyncio.Task[None]] = set()
        self.stop = session.events.subscribe(self._update)

    async def prompt_turn(self, token: ProgressToken | None) -> str:
        """Get ready for a prompted turn: its id, with progress begun when asked for."""
        turn_id = uuid.uuid4().hex[:12]
        self._progress[turn_id] = await self._begin(token)
        return turn_id

    def _update(self, turn_id: str, update: SessionUpdate) -> None:
        session_id = self.session.session_id
        if self.server.features.session_updates:
            self.server.protocol.notify(
                "tether/sessionUpdate",
                {"sessionId": session_id, "turnId": turn_id, "update": update.to_wire()},
            )
        if not turn_id:
            return
        if turn_id not in self._progress:
            # A turn the session started by itself: show it like a prompted one.
            self._progress[turn_id] = None
            task = asyncio.get_running_loop().create_task(self._begin_later(turn_id))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        token = self._progress.get(turn_id)
        if isinstance(update, TurnEnd):
            self._progress.pop(turn_id, None)
        if token is None:
            return
        progress = self.server.work_done_progress
        if isinstance(update, ToolCall):
            progress.report(token, types.WorkDoneProgressReport(message=update.title))
        elif isinstance(update, TurnEnd):
            progress.end(token, types.WorkDoneProgressEnd(message=update.stop_reason))

    async def _begin_later(self, turn_id: str) -> None:
        token = await self._begin(None)
        if turn_id in self._progress:
            self._progress[turn_id] = token
        elif token is not None:  # the turn ended meanwhile
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd())

    async def _begin(self, token: ProgressToken | None) -> ProgressToken | None:
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
            types.WorkDoneProgressBegin(title="Tether", message="Thinking…", cancellable=True),
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
        token = self._progress.pop(turn_id, None)
        if token is not None:
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd())
