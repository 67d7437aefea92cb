"""Running turns for the LSP front door: a prompt (or a finished background task) becomes a
turn whose updates go out as ``tether/sessionUpdate`` and ``$/progress``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tether.lsp.server import TetherServer
from tether.lsp.session_entry import SessionEntry
from tether.protocol.content import ContentBlock
from tether.protocol.updates import SessionUpdate, ToolCall, TurnEnd

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine, TurnResult
    from tether.engine.turns import TurnStream

log = logging.getLogger(__name__)


def encode(result: TurnResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stopReason": result.terminal.stop_reason,
        "turnId": result.turn_id,
        "usage": result.usage.to_wire(),
    }
    if result.terminal.error is not None:
        out["error"] = result.terminal.error.to_wire()
    return out


class TurnDriver:
    def __init__(self, server: TetherServer) -> None:
        self.server = server
        self._tasks: set[asyncio.Task[TurnResult]] = set()

    def notify(self, session_id: str, turn_id: str, update: SessionUpdate) -> None:
        if not self.server.features.session_updates:
            return
        self.server.protocol.notify(
            "tether/sessionUpdate",
            {"sessionId": session_id, "turnId": turn_id, "update": update.to_wire()},
        )

    async def prompt(
        self, entry: SessionEntry, prompt: Sequence[ContentBlock], token: Any
    ) -> dict[str, Any]:
        """Run a turn for the prompt and answer when it ends. A prompt that arrives during a
        turn is queued into it and answered when that turn ends."""
        engine = entry.engine
        if not engine.busy and not entry.ready:
            entry.ready = True
            for problem in await entry.workspace.ready():
                engine.note(problem)
        if engine.busy:
            future = await engine.enqueue(prompt)
            return encode(await asyncio.shield(future))
        driver = self._launch(entry, prompt, token)
        try:
            return encode(await asyncio.shield(driver))
        except asyncio.CancelledError:
            # $/cancelRequest: stop the turn, let the driver publish turn_end, then -32800.
            engine.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await driver
            raise

    def notification_turn(self, entry: SessionEntry) -> None:
        """A background task finished while the session was idle: answer it with a turn of
        its own (the editor sees a new turn)."""
        if not entry.engine.busy:
            self._launch(entry, None, None)

    def _launch(
        self, entry: SessionEntry, prompt: Sequence[ContentBlock] | None, token: Any
    ) -> asyncio.Task[TurnResult]:
        engine = entry.engine
        turn_id = uuid.uuid4().hex[:12]
        writer = engine.transcript
        entry.checkpoints.begin(
            turn_id, len(engine.messages), writer.last_uuid if writer is not None else None
        )
        stream = engine.start(prompt, turn_id=turn_id)
        driver = asyncio.get_running_loop().create_task(self._drive(engine, stream, token))
        self._tasks.add(driver)
        driver.add_done_callback(self._tasks.discard)
        return driver

    async def _drive(self, engine: QueryEngine, stream: TurnStream, token: Any) -> TurnResult:
        progress = await self._progress_begin(token, engine)
        try:
            async for update in stream:
                self.notify(engine.session_id, stream.turn_id, update)
                if progress is not None and isinstance(update, ToolCall):
                    self.server.work_done_progress.report(
                        progress, types.WorkDoneProgressReport(message=update.title)
                    )
                if progress is not None and isinstance(update, TurnEnd):
                    self.server.work_done_progress.end(
                        progress, types.WorkDoneProgressEnd(message=update.stop_reason)
                    )
                    progress = None
        finally:
            await stream.aclose()
            if progress is not None:
                self.server.work_done_progress.end(progress, types.WorkDoneProgressEnd())
        assert engine.last_result is not None
        return engine.last_result

    async def _progress_begin(self, token: Any, engine: QueryEngine) -> Any:
        progress: Any = self.server.work_done_progress
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

            def cancelled(_done: Any) -> None:  # the editor's progress "cancel" button
                loop.call_soon_threadsafe(engine.cancel)

            future.add_done_callback(cancelled)
        return token

    async def wait_all(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
