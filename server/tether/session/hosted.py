"""A session that runs on another thread's event loop, as the warm daemon's clients follow it.

The daemon runs each ``tether -p`` call in a thread of its own, with its own event loop (its
output must be exactly an in-process run's); its session lives on that loop. The daemon's
clients (``tether attach``, editors) live on the daemon's loop. ``HostedSession`` is the
part of the session they may use, each call carried to the loop it belongs on: updates are
delivered on the follower's loop, in order; ``cancel`` and ``history`` run on the session's.
Prompts, mode changes and permission questions stay with the ``-p`` caller: it drives the
session, the others watch and may stop the running turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from tether.errors import SessionError
from tether.protocol.updates import Mode, SessionUpdate, Usage
from tether.session.events import UpdateListener
from tether.session.history import History
from tether.session.session import Session


class HostedEvents:
    """``subscribe`` as ``SessionEvents`` has it, delivering on the subscriber's loop."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def subscribe(self, listener: UpdateListener) -> Callable[[], None]:
        loop = asyncio.get_running_loop()

        def forward(turn_id: str, update: SessionUpdate) -> None:
            # call_soon_threadsafe keeps the order the session published in.
            with contextlib.suppress(RuntimeError):  # the follower's loop has closed
                loop.call_soon_threadsafe(listener, turn_id, update)

        return self._session.events.subscribe(forward)


class HostedSession:
    def __init__(self, session: Session, loop: asyncio.AbstractEventLoop) -> None:
        self._session = session
        self._loop = loop
        """The loop the session runs on (the print call's)."""
        self.events = HostedEvents(session)

    @property
    def session_id(self) -> str:
        return self._session.session_id

    @property
    def cwd(self) -> Path:
        return self._session.cwd

    @property
    def busy(self) -> bool:
        return self._session.busy

    # What a follower is told when it starts following (read across threads: each is one
    # attribute read, as current as the moment it is read).

    @property
    def title(self) -> str | None:
        return self._session.title

    @property
    def turns(self) -> int:
        return self._session.turns

    @property
    def mode(self) -> Mode:
        return self._session.mode

    @property
    def usage(self) -> Usage:
        return self._session.usage

    @property
    def rewindable_turns(self) -> list[str]:
        return list(self._session.rewindable_turns)

    def cancel(self) -> bool:
        """Stop the running turn (on the session's loop); True if one was running."""
        running = self._session.busy
        with contextlib.suppress(RuntimeError):  # the call's loop has closed: nothing runs
            self._loop.call_soon_threadsafe(self._session.cancel)
        return running

    async def history(self) -> list[tuple[str, SessionUpdate]]:
        return (await self.full_history()).updates

    async def full_history(self) -> History:
        if self._loop.is_closed():
            raise SessionError(f"the session {self.session_id} has ended")
        future = asyncio.run_coroutine_threadsafe(self._session.full_history(), self._loop)
        return await asyncio.wrap_future(future)
