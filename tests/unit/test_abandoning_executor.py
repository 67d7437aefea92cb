"""A front door's loop ends without waiting for a worker thread that is stuck for good (a
read that never returns must not keep a dead editor's daemon alive)."""

from __future__ import annotations

import asyncio
import threading
import time

from tether.core.executor import WORKERS, install_default_executor


def test_the_loop_ends_while_a_worker_thread_is_still_blocked() -> None:
    release = threading.Event()

    async def main() -> None:
        install_default_executor()
        stuck = asyncio.ensure_future(asyncio.to_thread(release.wait))
        await asyncio.sleep(0)  # the thread has the work
        assert not stuck.done()
        # Other work still gets a thread.
        assert await asyncio.wait_for(asyncio.to_thread(lambda: 42), 5) == 42
        stuck.cancel()

    started = time.monotonic()
    try:
        asyncio.run(main())  # joins the default executor's threads at the end
        assert time.monotonic() - started < 2
    finally:
        release.set()


def test_its_threads_are_started_with_it_not_by_the_calls_of_a_busy_loop() -> None:
    def io_threads() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("tether-io")}

    async def main() -> None:
        before = io_threads()
        install_default_executor()
        started = io_threads() - before
        assert len(started) == WORKERS
        # As many calls at once as there are threads: each gets one already there.
        gate = threading.Barrier(WORKERS, timeout=5)
        await asyncio.gather(*(asyncio.to_thread(gate.wait) for _ in range(WORKERS)))
        assert io_threads() - before == started

    asyncio.run(main())
