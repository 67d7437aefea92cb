"""The default executor of a front door's event loop: exiting never waits for its threads.

``asyncio.run`` ends by joining every thread of the loop's default executor. One blocked
for good (a read from a network filesystem that hangs, a call into a library that never
returns) would keep a daemon whose editor has gone alive forever. Front doors install this
executor; whatever their threads are doing when the loop ends is abandoned, and the process
exits (``os._exit``) right after.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


class AbandoningExecutor(ThreadPoolExecutor):
    """A thread pool whose ``shutdown`` never waits for running work."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=True)


def install_default_executor() -> None:
    """Make the running loop's default executor an ``AbandoningExecutor``."""
    asyncio.get_running_loop().set_default_executor(
        AbandoningExecutor(thread_name_prefix="tether-io")
    )
