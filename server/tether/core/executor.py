"""The default executor of a front door's event loop: exiting never waits for its threads,
and its threads are there before the first call needs one.

``asyncio.run`` ends by joining every thread of the loop's default executor. One blocked
for good (a read from a network filesystem that hangs, a call into a library that never
returns) would keep a daemon whose editor has gone alive forever. Front doors install this
executor; whatever their threads are doing when the loop ends is abandoned, and the process
exits (``os._exit``) right after.

A thread pool starts a thread at a submit that finds none idle, and ``Thread.start`` waits
until the new thread runs: in a busy daemon (threads taking the interpreter in turn) that
wait fell on the event loop mid-run, up to 16 ms in one callback. The threads are started
with the loop instead, before any session.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

WORKERS = min(32, (os.cpu_count() or 1) + 4)
"""As many threads as ``ThreadPoolExecutor`` would start at most by default."""
START_WAIT_S = 5.0


class AbandoningExecutor(ThreadPoolExecutor):
    """A thread pool whose ``shutdown`` never waits for running work."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=True)


def start_threads(executor: ThreadPoolExecutor, count: int) -> None:
    """Start ``count`` threads of ``executor`` now (its ``max_workers`` or fewer): each
    submit finds the threads before it waiting at the gate, none idle, so it starts one."""
    gate = threading.Barrier(count)
    for _ in range(count):
        executor.submit(functools.partial(gate.wait, START_WAIT_S))


def install_default_executor() -> None:
    """Make the running loop's default executor an ``AbandoningExecutor``, its threads
    started."""
    executor = AbandoningExecutor(max_workers=WORKERS, thread_name_prefix="tether-io")
    start_threads(executor, WORKERS)
    asyncio.get_running_loop().set_default_executor(executor)
