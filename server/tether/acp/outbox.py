"""``session/update`` notifications leave through here, in the order they happened."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from acp import Client

from tether.acp.mapping import AcpUpdate

log = logging.getLogger(__name__)


class Outbox:
    """Turns ``send`` (and wait for the write); updates between turns are ``post``ed."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._tasks: set[asyncio.Task[None]] = set()

    async def send(self, session_id: str, updates: Sequence[AcpUpdate]) -> None:
        for update in updates:
            await self.client.session_update(session_id=session_id, update=update)

    def post(self, session_id: str, updates: Sequence[AcpUpdate]) -> None:
        # Tasks start in creation order and queue their message in their first step, so
        # posted updates keep their order.
        task = asyncio.get_running_loop().create_task(self.send(session_id, updates))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def post_after_reply(self, session_id: str, updates: Sequence[AcpUpdate]) -> None:
        # The SDK queues a handler's reply as soon as the handler returns, before the loop
        # runs callbacks again; clients drop updates for a session they do not know yet.
        asyncio.get_running_loop().call_soon(self.post, session_id, updates)

    async def drain(self, session_id: str) -> None:
        """Wait until every update posted so far has been written (a prompt's answer must
        not overtake the updates of its turn)."""
        pending = list(self._tasks)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("session/update failed: %s", task.exception())

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
