"""The editor never waits for the agent: its input is read between any two callbacks of
the event loop, not behind every callback already queued, and what the user types is
handled there and then (which messages: ``io.EditorMessages``).

With many sessions streaming, each iteration of the loop runs hundreds of ready callbacks
(the agent's work); asyncio runs them first in, first out, so a message from the editor
waited behind all of them, and then took a few more trips through the queue before its
answer was written. ``EditorFirstLoop`` checks the editor's input (a non-blocking
``poll``, at most once per ``POLL_INTERVAL_S``) before running each ready callback, and
reads it there and then, on the loop's own thread, so documents and review state need no
locks. An idle loop reads the editor as usual, when the selector says so.

It relies on CPython's ``BaseEventLoop`` running its ready callbacks with
``self._ready.popleft()``; where that is not so, the loop is the plain one and says why in
the log.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import select
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.0005
"""The least time between two checks of the editor's input while callbacks run (a check
costs about a microsecond; this bounds it to a fraction of a percent of the loop)."""
READ_SIZE = 1 << 18


def _hook_missing(loop: asyncio.AbstractEventLoop) -> str | None:
    """Why ``loop`` cannot check the editor between callbacks (None: it can)."""
    if not callable(getattr(loop, "_run_once", None)):
        return "asyncio's loop has no _run_once"
    if type(getattr(loop, "_ready", None)) is not collections.deque:
        return "asyncio's loop keeps its ready callbacks in no _ready deque"
    return None


class _ReadyQueue(collections.deque[asyncio.Handle]):
    """The loop's ready callbacks: taking the next one first lets the editor in."""

    def __init__(self, before_each: Callable[[], None]) -> None:
        super().__init__()
        self._before_each = before_each

    def popleft(self) -> asyncio.Handle:
        self._before_each()
        return super().popleft()


class EditorFirstLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._inputs: dict[int, Callable[[bool], None]] = {}
        self._poll = select.poll()
        self._next_check = 0.0
        missing = _hook_missing(self)
        self.prioritizes = missing is None
        """Whether the editor's input is checked between callbacks."""
        if missing is not None:
            log.info("the editor's messages wait their turn on the event loop: %s", missing)
            return
        queue = _ReadyQueue(self._check_inputs)
        queue.extend(self._ready)  # pyright: ignore[reportAttributeAccessIssue]
        self._ready = queue  # a private attribute of asyncio's loop, checked above

    def add_priority_reader(self, fd: int, reader: Callable[[bool], None]) -> None:
        """Call ``reader`` when ``fd`` is readable: as the selector says so (with False),
        and between callbacks while the loop is busy (with True)."""
        self.add_reader(fd, reader, False)
        self._inputs[fd] = reader
        self._poll.register(fd, select.POLLIN)

    def remove_priority_reader(self, fd: int) -> None:
        self.remove_reader(fd)
        if self._inputs.pop(fd, None) is not None:
            self._poll.unregister(fd)

    def _check_inputs(self) -> None:
        if not self._inputs:
            return
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + POLL_INTERVAL_S
        for fd, _events in self._poll.poll(0):
            reader = self._inputs.get(fd)
            if reader is None:
                continue
            try:
                reader(True)
            except Exception:  # outside any callback: nothing else would catch it
                log.exception("reading the editor's input failed")


class FdInput:
    """A pipe or socket read in the loop's callbacks (first, on an ``EditorFirstLoop``):
    each read's bytes go to ``take``, with whether they were read between two callbacks;
    ``closed`` is done at end of input."""

    def __init__(self, fd: int, take: Callable[[bytes, bool], None]) -> None:
        self._fd = fd
        self._take = take
        self._loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[None] = self._loop.create_future()
        os.set_blocking(fd, False)
        if isinstance(self._loop, EditorFirstLoop):
            self._loop.add_priority_reader(fd, self._read_ready)
        else:
            self._loop.add_reader(fd, self._read_ready, False)

    def _read_ready(self, first: bool) -> None:
        if self.closed.done():
            return
        try:
            data = os.read(self._fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            log.info("the editor's input failed: %s", e)
            data = b""
        if not data:
            self.close()
            return
        self._take(data, first)

    def close(self) -> None:
        if self.closed.done():
            return
        if isinstance(self._loop, EditorFirstLoop):
            self._loop.remove_priority_reader(self._fd)
        else:
            self._loop.remove_reader(self._fd)
        self.closed.set_result(None)
