"""How a session's updates reach the front doors that follow it.

``SessionEvents`` is made before the engine and given to it at construction: the engine
publishes updates of idle times here (a background task changed) and asks for a turn of
its own when a finished task's notification arrives while nothing runs. The session
publishes each turn's updates here too, so every subscriber (one editor, or several
clients of the warm daemon attached to one session) sees the same stream in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from tether.protocol.updates import SessionUpdate

log = logging.getLogger(__name__)

UpdateListener = Callable[[str, SessionUpdate], None]
"""Receives ``(turn_id, update)``; ``turn_id`` is empty for updates between turns."""


class SessionEvents:
    def __init__(self) -> None:
        self._listeners: list[UpdateListener] = []
        self.wake_requested = asyncio.Event()
        """Set when finished tasks wait to be answered by a turn of their own."""

    def subscribe(self, listener: UpdateListener) -> Callable[[], None]:
        """Follow the session's updates; returns the function that stops following."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @property
    def followed(self) -> bool:
        return bool(self._listeners)

    def publish(self, turn_id: str, update: SessionUpdate) -> None:
        for listener in list(self._listeners):
            try:
                listener(turn_id, update)
            except Exception:  # one broken subscriber must not starve the others
                log.exception("a session update listener failed")

    # -- what the engine calls (``engine.turns.EngineEvents``) ---------------------------

    def idle_update(self, update: SessionUpdate) -> None:
        self.publish("", update)

    def wake(self) -> None:
        self.wake_requested.set()
