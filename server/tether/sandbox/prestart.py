"""The next command's sandbox, started while the model thinks.

Setting up a bubblewrap sandbox (namespaces, a fresh ``/dev`` and ``/proc``, thirty-odd
mounts) and starting the gate's interpreter cost milliseconds before the command's own shell
even starts; an agent runs commands one after another, and each waited for it. So when a
command ends, the sandbox starts the next one's: the same bubblewrap command line, running
the gate waiting on its stdin for the policy and the command (``launch.waiting_argv``).

The prepared sandbox serves the next command only if that command's own, freshly computed
bubblewrap command line is the same to the byte (same layout of the filesystem: protected
paths, hidden paths, sockets; same working directory), with the same environment and umask
(the warm daemon runs commands for several callers), and every
path on that command line is still the file it was when the sandbox was prepared. The last
matters: a mount covers the file that was there, and a path replaced on the host since
(``git config`` on the host rewrites ``.git/config`` by a rename, a service recreates its
socket) is no longer covered inside. Anything else, and it is discarded and the command
starts the usual way. The gate's policy is the command's own, handed over with it. Each
sandbox still serves exactly one command (its PID namespace dies with it); an unused one is
killed after ``linger_s``.

The prepared process is a plain ``subprocess.Popen``, tied to no event loop until a command
takes it (the warm daemon runs sessions on several loops, and a loop may close with one
waiting): the loop that takes it follows its output through a pipe reader and its exit
through a pidfd.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tether.sandbox.launch import Refusals, job, runtime, split_gate, waiting_argv

log = logging.getLogger(__name__)

LINGER_S = 2.0
"""How long a prepared sandbox waits for its command."""
MAX_COMMAND_BYTES = 60_000
"""A longer job starts the usual way (it must fit the pipe without waiting)."""
CAN_FOLLOW = hasattr(os, "pidfd_open")


@dataclass
class _Ready:
    prefix: tuple[str, ...]
    """The bubblewrap command line up to ``--``."""
    files: dict[str, tuple[int, ...] | None]
    """What identified every path on it when it was prepared (``_files``)."""
    env: dict[str, str]
    umask: int
    popen: subprocess.Popen[bytes]
    refusals: Refusals
    timer: threading.Timer | None = field(default=None)


class PreparedProcess:
    """A prepared sandbox running a command, followed on the loop that took it: the part
    of ``asyncio.subprocess.Process`` the shell runner uses."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdout: asyncio.StreamReader,
        pidfd: int,
        refusals: Refusals,
    ) -> None:
        self.pid = popen.pid
        self.stdout = stdout
        self.refusals = refusals
        self._popen = popen
        self._pidfd = pidfd
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._loop.add_reader(pidfd, self._check)
        self._check()

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
        self._popen.kill()


class Prestarter:
    """At most one prepared sandbox (commands run one after another; a parallel one starts
    the usual way). Thread-safe: the warm daemon runs sessions on several loops."""

    def __init__(self, linger_s: float) -> None:
        self._linger_s = linger_s
        self._lock = threading.Lock()
        self._ready: _Ready | None = None
        self._closed = False
        self._pending: Future[None] | None = None
        """A sandbox being started (``_SPAWNER``)."""

    # -- using it ---------------------------------------------------------------------

    async def take(
        self, argv: Sequence[str], env: Mapping[str, str], umask: int
    ) -> PreparedProcess | None:
        """The prepared sandbox running ``argv`` (``bwrap … -- GATE POLICY -- COMMAND``) with
        ``env`` and ``umask``, or None."""
        parts = split_gate(argv)
        if parts is None or any("\0" in a for a in argv):
            return None
        prefix, policy, command = tuple(parts[0]), parts[1], parts[2]
        with self._lock:
            pending = self._pending
        if pending is not None:
            with contextlib.suppress(Exception):  # it reports its own failures
                await asyncio.wrap_future(pending)  # the moment bubblewrap takes to spawn
        with self._lock:
            ready, self._ready = self._ready, None
        if ready is None:
            return None
        if ready.timer is not None:
            ready.timer.cancel()
        data = job(policy, command)
        popen = ready.popen
        fits = (
            ready.prefix == prefix
            and ready.env == dict(env)
            and ready.umask == umask
            and len(data) <= MAX_COMMAND_BYTES
            and _files(prefix) == ready.files
        )
        if not fits or popen.poll() is not None or popen.stdin is None or popen.stdout is None:
            _discard(ready)
            return None
        loop = asyncio.get_running_loop()
        try:
            popen.stdin.write(data)  # fits the pipe: never waits
            popen.stdin.close()
            pidfd = os.pidfd_open(popen.pid)
        except OSError as e:
            _discard(ready)
            log.debug("the prepared sandbox did not take the command: %s", e)
            return None
        reader = asyncio.StreamReader(limit=1 << 16, loop=loop)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), popen.stdout)
        except BaseException:
            os.close(pidfd)
            _discard(ready)
            raise
        return PreparedProcess(popen, reader, pidfd, ready.refusals)

    # -- preparing it -----------------------------------------------------------------

    def prepare(self, argv: Sequence[str], env: Mapping[str, str], umask: int, cwd: Path) -> None:
        """Start a sandbox like ``argv``'s (its gate waiting for the job) for the next
        command."""
        parts = split_gate(argv)
        if parts is None or not CAN_FOLLOW:
            return
        prefix = tuple(parts[0])
        with self._lock:
            if self._closed or self._ready is not None or self._pending is not None:
                return
            files = _files(prefix)
            self._pending = _spawner().submit(self._spawn, prefix, files, dict(env), umask, cwd)

    def _spawn(
        self,
        prefix: tuple[str, ...],
        files: dict[str, tuple[int, ...] | None],
        env: dict[str, str],
        umask: int,
        cwd: Path,
    ) -> None:
        refusals = Refusals()
        try:
            popen = subprocess.Popen(
                [*prefix, *waiting_argv(runtime(), refusals.write_fd)],
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
                umask=umask,
                pass_fds=(refusals.write_fd,),
            )
        except BaseException as e:
            refusals.discard()
            with self._lock:
                self._pending = None
            log.debug("could not prepare a sandbox: %s", e)
            return
        refusals.close_writer()
        ready = _Ready(prefix, files, env, umask, popen, refusals)
        with self._lock:
            self._pending = None
            closed = self._closed
            if not closed:
                self._ready = ready
        if closed:
            _discard(ready)
            return
        ready.timer = threading.Timer(self._linger_s, self._expire, (ready,))
        ready.timer.daemon = True
        ready.timer.start()

    def _expire(self, ready: _Ready) -> None:
        with self._lock:
            if self._ready is not ready:
                return
            self._ready = None
        _discard(ready)

    def close(self) -> None:
        """Kill the prepared sandbox (the workspace is closing); prepare no more."""
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, None
            pending = self._pending
        if ready is not None:
            if ready.timer is not None:
                ready.timer.cancel()
            _discard(ready)
        if pending is not None:  # one being started discards itself (closed)
            with contextlib.suppress(Exception):
                pending.result(timeout=5.0)


_SPAWNER_LOCK = threading.Lock()
_SPAWNER: list[ThreadPoolExecutor] = []


def _spawner() -> ThreadPoolExecutor:
    """The thread that starts prepared sandboxes, off the command's path (while its result
    goes back to the model). One for the process, living as long as it: bubblewrap's
    ``--die-with-parent`` follows the thread that started it."""
    with _SPAWNER_LOCK:
        if not _SPAWNER:
            _SPAWNER.append(ThreadPoolExecutor(1, thread_name_prefix="tether-sandbox"))
        return _SPAWNER[0]


def _discard(ready: _Ready) -> None:
    """Kill an unused sandbox and wait for it (any thread: SIGKILL is quick)."""
    popen = ready.popen
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(timeout=5.0)
    pipes: list[IO[bytes] | None] = [popen.stdin, popen.stdout]
    for pipe in pipes:
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    ready.refusals.discard()


def _files(prefix: Sequence[str]) -> dict[str, tuple[int, ...] | None]:
    """What identifies each path the sandbox mounts on now (None: not there). Where a mount
    protects (read-only binds, hiding tmpfs), the change time too: a file or directory
    replaced on the host may get the inode number just freed, and the new one has a new
    change time. Where a mount grants (the workspace, ``--chdir``), device and inode: a
    directory's change time moves with its entries, and a replaced one is only less
    reachable inside (what is under it is checked on its own)."""
    out: dict[str, tuple[int, ...] | None] = {}
    i = 1
    while i < len(prefix):
        option = prefix[i]
        arity = _ARITY.get(option, 0)
        if option in _PROTECTS or option in _GRANTS:
            path = prefix[i + arity]  # the destination: the last argument
            if path not in _STABLE:
                out[path] = _identity(path, full=option in _PROTECTS or path in out)
        i += 1 + arity
    return out


def _identity(path: str, *, full: bool) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if full or not stat.S_ISDIR(st.st_mode):
        return (st.st_dev, st.st_ino, st.st_ctime_ns)
    return (st.st_dev, st.st_ino)


_ARITY = {
    **dict.fromkeys(
        ("--bind", "--ro-bind", "--bind-try", "--ro-bind-try", "--dev-bind", "--dev-bind-try"), 2
    ),
    **dict.fromkeys(("--symlink", "--setenv"), 2),
    **dict.fromkeys(
        ("--tmpfs", "--remount-ro", "--dev", "--proc", "--chdir", "--cap-drop", "--unsetenv"), 1
    ),
    **dict.fromkeys(("--dir", "--mqueue", "--perms", "--size", "--uid", "--gid"), 1),
}
"""Arguments each bubblewrap option takes (the others take none)."""
_PROTECTS = frozenset({"--ro-bind", "--ro-bind-try", "--tmpfs", "--remount-ro"})
_GRANTS = frozenset({"--bind", "--bind-try", "--chdir"})
_STABLE = frozenset({"/", "/dev", "/proc", "/tmp", "/run"})
"""Mount points that are never replaced."""
