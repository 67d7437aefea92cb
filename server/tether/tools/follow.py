"""Starting a command's process off the event loop, and following it on the loop.

``asyncio.create_subprocess_exec`` forks and execs on the event loop's thread: with a long
command line (bubblewrap's, ninety-odd arguments) and a daemon serving many sessions, each
start held every session's loop for milliseconds. Here the process is a plain
``subprocess.Popen`` started on a thread that lives as long as the process (bubblewrap's
``--die-with-parent`` follows the thread that started it, not the process: a pool thread
that ends would take its sandboxes with it), and the loop that runs the command follows its
output through a pipe reader and its exit through a pidfd. A prepared sandbox
(``sandbox/prestart.py``) is followed the same way once a command takes it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Self

CAN_FOLLOW = hasattr(os, "pidfd_open")
STARTERS = 2
"""Threads that start processes (each start is a fork and an exec: short)."""


class FollowedProcess:
    """A ``Popen`` followed on the running loop: the part of ``asyncio.subprocess.Process``
    the shell runner uses. ``popen.stdout``, when a pipe, is read through a stream reader
    once ``attach`` has run."""

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int) -> None:
        self.pid = popen.pid
        self.stdout: asyncio.StreamReader | None = None
        self._pipe: asyncio.BaseTransport | None = None
        self._popen = popen
        self._pidfd = pidfd
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._loop.add_reader(pidfd, self._check)
        self._check()

    @classmethod
    async def attach(cls, popen: subprocess.Popen[bytes]) -> Self:
        """Follow ``popen`` (already started) on the running loop."""
        loop = asyncio.get_running_loop()
        pidfd = os.pidfd_open(popen.pid)
        try:
            process = cls(popen, pidfd)
        except BaseException:
            os.close(pidfd)
            raise
        if popen.stdout is not None:
            reader = asyncio.StreamReader(limit=1 << 16, loop=loop)
            try:
                transport, _protocol = await loop.connect_read_pipe(
                    lambda: asyncio.StreamReaderProtocol(reader), popen.stdout
                )
            except BaseException:
                process._detach()
                raise
            process.stdout, process._pipe = reader, transport
        return process

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def _check(self) -> None:
        if self._popen.poll() is None or self._exited.done():
            return
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._exited.set_result(self._popen.returncode)

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def on_exit(self, callback: Callable[[], None]) -> None:
        self._exited.add_done_callback(lambda _f: callback())

    def kill(self) -> None:
        """Kill the process if it still runs, and stop reading its output: the shell runner
        calls it last, once it read what it will (a process that escaped the group may
        hold the pipe open forever)."""
        self._popen.kill()
        if self._pipe is not None:
            self._pipe.close()

    def _detach(self) -> None:
        if not self._exited.done():
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._exited.cancel()


def popen(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdin: int | None,
    stdout: int | IO[bytes],
    env: dict[str, str],
    umask: int,
    pass_fds: tuple[int, ...],
) -> subprocess.Popen[bytes]:
    """``argv`` started as a new process group, its standard error on its standard output."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
        umask=umask,
        pass_fds=pass_fds,
    )


_LOCK = threading.Lock()
_STARTER: list[ThreadPoolExecutor] = []


def starter() -> ThreadPoolExecutor:
    """The threads that start processes: one pool for the process, living as long as it
    (``ThreadPoolExecutor``'s threads wait for work until it is shut down, never sooner)."""
    with _LOCK:
        if not _STARTER:
            _STARTER.append(ThreadPoolExecutor(STARTERS, thread_name_prefix="tether-start"))
        return _STARTER[0]
