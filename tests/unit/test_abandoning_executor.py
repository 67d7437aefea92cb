"""A front door's loop ends without waiting for a worker thread that is stuck for good (a
read that never returns must not keep a dead editor's daemon alive)."""

from __future__ import annotations

import asyncio
import threading
import time

from tether.core.executor import install_default_executor


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
