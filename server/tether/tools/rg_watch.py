"""A watchdog for ripgrep: stop it when it waits on a file that never ends.

ripgrep reads every ``.gitignore``, ``.ignore`` and ``.rgignore`` it meets, and anyone who
can write to the tree (the model, with ``mkfifo .gitignore`` or ``ln -s /dev/zero
.ignore``) can make one of them a FIFO, which blocks the open until a writer comes, or a
device that never ends. While ripgrep runs, the watchdog looks (from half a second on, a few
times a second; nothing for the searches that end sooner) at what it is doing: a thread
waiting in a FIFO open (``wchan`` ``wait_for_partner``) or a FIFO, device or socket among
its open files means it is stuck for good. It is then killed and the caller answers without
it: the Python walk, which refuses such files, gives the same answer. Linux only (``/proc``);
elsewhere ripgrep runs unwatched.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

FIRST_LOOK_S = 0.5
POLL_S = 0.25
_SPECIAL = (stat.S_ISFIFO, stat.S_ISCHR, stat.S_ISBLK, stat.S_ISSOCK)


class RipgrepStuck(Exception):
    """ripgrep waited on a FIFO or read a device; it was killed."""


def stuck(pid: int) -> bool:
    """Whether process ``pid`` waits on a FIFO or has one (or a device, a socket) open
    beyond its standard streams."""
    proc = f"/proc/{pid}"
    try:
        for task in os.listdir(f"{proc}/task"):
            with open(f"{proc}/task/{task}/wchan") as f:
                if f.read().strip() == "wait_for_partner":
                    return True
        for fd in os.listdir(f"{proc}/fd"):
            if int(fd) > 2 and any(
                is_kind(os.stat(f"{proc}/fd/{fd}").st_mode) for is_kind in _SPECIAL
            ):
                return True
    except (OSError, ValueError):
        return False  # gone, or not Linux
    return False


async def watched(proc: asyncio.subprocess.Process, work: Awaitable[T]) -> T:
    """``work`` (reading ``proc``'s output); ``RipgrepStuck`` once ``proc`` is stuck (it is
    killed)."""
    task = asyncio.ensure_future(work)
    delay = FIRST_LOOK_S
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=delay)
            if done:
                return task.result()
            delay = POLL_S
            if proc.returncode is None and stuck(proc.pid):
                proc.kill()
                raise RipgrepStuck
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
