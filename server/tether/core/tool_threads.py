"""Threads for the blocking file work of tools, apart from the threads the daemon needs.

A tool reads and walks files the model chose: a huge file, a slow disk, a network mount
that hangs. Were that work in the event loop's default executor (six threads on a small
machine), six slow reads would leave no thread for the daemon's own work (listing
sessions, loading transcripts) and every handler waiting on one would wait too. Tools use
a pool of their own instead, and each session (with its subagents) a lane of it: a lane
runs at most ``SHARE`` calls at once, so one session never takes the whole pool.

A call whose caller is cancelled (the user stopped the turn) returns at once; its thread
may still be running. It is told to stop (``Stop``, checked by long loops between chunks)
and keeps its place in the lane until it really ends, so no session can pile up threads by
cancelling. The pool's threads are never waited for at exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

WORKERS = 64
SHARE = 4


class Stopped(Exception):
    """A tool's thread work stopped because its caller went away."""


class Stop:
    """Set when the call's caller is cancelled; long work checks it between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def check(self) -> None:
        """Raise ``Stopped`` once the caller has gone."""
        if self._event.is_set():
            raise Stopped


class ToolThreads:
    """The pool (one per process: ``shared_pool``). Its threads are started as needed, up
    to ``workers``, and are daemon threads: unlike a ``ThreadPoolExecutor``'s, which the
    interpreter joins at exit, one stuck for good never holds the process."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._limit = workers
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def lane(self, share: int = SHARE) -> ToolLane:
        return ToolLane(self, share)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            self._queue.put((future, fn))
            if self._idle == 0 and self._threads < self._limit:
                self._threads += 1
                name = f"tether-tool-{self._threads}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            future, fn = self._queue.get()
            with self._lock:
                self._idle -= 1
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as e:
                future.set_exception(e)
            else:
                future.set_result(result)
            del future, fn


class ToolLane:
    """One session's way into the pool: at most ``share`` of its calls at once."""

    def __init__(self, pool: ToolThreads, share: int) -> None:
        self._pool = pool
        self._share = share
        self._busy = 0
        self._freed: asyncio.Event | None = None
        self._lock = threading.Lock()

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` on a tool thread (``asyncio.to_thread`` for tools)."""
        return await self._run(functools.partial(fn, *args, **kwargs), None)

    async def run_stoppable(self, fn: Callable[[Stop], T]) -> T:
        """``fn(stop)`` on a tool thread; ``stop`` is set when this call is cancelled."""
        stop = Stop()
        return await self._run(functools.partial(fn, stop), stop)

    async def _run(self, call: Callable[[], T], stop: Stop | None) -> T:
        loop = asyncio.get_running_loop()
        await self._take()
        context = contextvars.copy_context()

        def work() -> T:
            try:
                return context.run(call)
            finally:
                with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                    loop.call_soon_threadsafe(self._give_back)

        try:
            future = self._pool.submit(work)
        except BaseException:
            self._give_back()
            raise
        waited = asyncio.wrap_future(future)
        try:
            return await asyncio.shield(waited)
        except asyncio.CancelledError:
            if stop is not None:
                stop.set()
            if future.cancel():  # it never started: its place is free now
                self._give_back()
            waited.add_done_callback(_forget)
            raise

    async def _take(self) -> None:
        while True:
            with self._lock:
                if self._busy < self._share:
                    self._busy += 1
                    return
                if self._freed is None:
                    self._freed = asyncio.Event()
                freed = self._freed
            await freed.wait()

    def _give_back(self) -> None:
        with self._lock:
            self._busy -= 1
            freed, self._freed = self._freed, None
        if freed is not None:
            freed.set()


def _forget(future: asyncio.Future[Any]) -> None:
    """Nobody waits for a cancelled call's outcome any more (``Stopped``, mostly)."""
    if not future.cancelled():
        future.exception()


_SHARED: list[ToolThreads] = []


def shared_pool() -> ToolThreads:
    """The process's pool (made on first use)."""
    if not _SHARED:
        _SHARED.append(ToolThreads())
    return _SHARED[0]
