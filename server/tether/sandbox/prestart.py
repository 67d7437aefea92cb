"""The next commands' sandboxes, started while the model thinks.

Setting up a bubblewrap sandbox (namespaces, a fresh ``/dev`` and ``/proc``, thirty-odd
mounts) and starting the gate's interpreter cost milliseconds before the command's own shell
even starts; an agent runs commands one after another, and each waited for it. So when a
command ends, the sandbox starts the next one's, which gets ready while the result goes
back to the model: the same bubblewrap command line, running the gate waiting on its stdin
for the policy and the command (``launch.waiting_argv``). Only if the command left every
path that command line mounts on as it was when the command started: bubblewrap makes a
missing mount target on the host, following a link put in its place, before any gate runs
(a command that moved a socket's folder and left a link to ``.git/commondir`` there would
have it made). And never while the command runs, which could change the tree under the
mounts being made. A prepared sandbox whose files changed meanwhile is replaced.
Sessions running commands at once draw on a small pool,
sized to how many commands of the workspace ran at once lately (``Demand``), at most
``MOST``.

A prepared sandbox serves a command only if that command's own, freshly computed bubblewrap
command line is the same to the byte (same layout of the filesystem: protected paths,
hidden paths, sockets; same working directory), with the same environment and umask (the
warm daemon runs commands for several callers), and every path on that command line is
still the file it was when the sandbox was prepared (``mounted.py``). The last matters: a
mount covers the file that was there, and a path replaced on the host since (``git config``
on the host rewrites ``.git/config`` by a rename, a service recreates its socket) is no
longer covered inside. Anything else, and the command starts the usual way. The gate's
policy is the command's own, handed over with it. Each sandbox still serves exactly one
command (its PID namespace dies with it); an unused one is killed after ``linger_s``.

The prepared process is a plain ``subprocess.Popen``, tied to no event loop until a command
takes it (the warm daemon runs sessions on several loops, and a loop may close with one
waiting): the loop that takes it follows it like any command's process (``follow.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tether.sandbox.launch import Refusals, job, runtime, split_gate, waiting_argv
from tether.sandbox.mounted import Identities, identities, same_objects
from tether.tools.follow import CAN_FOLLOW, FollowedProcess, popen, starter

log = logging.getLogger(__name__)

LINGER_S = 30.0
"""How long a prepared sandbox waits for its command: longer than a model takes to answer
(seconds, tens of seconds with a long reply or a local model), or each command pays for
a sandbox prepared in vain and starts its own anyway. Waiting costs an idle bubblewrap and
interpreter per sandbox, no CPU; a command takes one only after checking it afresh."""
MOST = 4
"""Prepared sandboxes per workspace at most (each is a bubblewrap and an interpreter
waiting; more than the machine's cores start no faster)."""
MAX_COMMAND_BYTES = 60_000
"""A longer job starts the usual way (it must fit the pipe without waiting)."""


def layout_of(argv: Sequence[str]) -> Identities | None:
    """What identifies the paths the sandbox of ``argv`` mounts on, now (None: ``argv``
    runs no gate)."""
    parts = split_gate(argv)
    return identities(tuple(parts[0])) if parts is not None else None


@dataclass
class _Ready:
    prefix: tuple[str, ...]
    """The bubblewrap command line up to ``--``."""
    files: Identities
    """What identified every path on it when it was prepared (``mounted.identities``)."""
    env: dict[str, str]
    umask: int
    popen: subprocess.Popen[bytes]
    refusals: Refusals
    timer: threading.Timer | None = field(default=None)

    def serves(self, prefix: tuple[str, ...], env: Mapping[str, str], umask: int) -> bool:
        return self.prefix == prefix and self.env == env and self.umask == umask


class PreparedProcess(FollowedProcess):
    """A prepared sandbox running a command, and the report of its gate."""

    refusals: Refusals


class Demand:
    """How many commands of a workspace ran at once lately (within ``window_s``): how many
    sandboxes to keep prepared. Thread-safe."""

    def __init__(self, window_s: float) -> None:
        self._window_s = window_s
        self._lock = threading.Lock()
        self._running = 0
        self._peak = 0
        self._peak_at = 0.0

    def begin(self) -> None:
        with self._lock:
            self._running += 1
            self._renew(time.monotonic())

    def end(self) -> None:
        with self._lock:
            self._running -= 1

    def want(self) -> int:
        with self._lock:
            self._renew(time.monotonic())
            return max(1, self._peak)

    def _renew(self, now: float) -> None:
        if self._running >= self._peak or now - self._peak_at >= self._window_s:
            self._peak, self._peak_at = self._running, now


class Prestarter:
    """The prepared sandboxes of a workspace. Thread-safe: the warm daemon runs sessions on
    several loops."""

    def __init__(self, linger_s: float, most: int = MOST) -> None:
        self._linger_s = linger_s
        self._most = most
        self._lock = threading.Lock()
        self._ready: list[_Ready] = []
        """Oldest first."""
        self._pending: list[Future[None]] = []
        """Sandboxes being started (``follow.starter``), oldest first; done ones are
        dropped as they are seen."""
        self._closed = False

    # -- using one --------------------------------------------------------------------

    async def take(
        self, argv: Sequence[str], env: Mapping[str, str], umask: int
    ) -> PreparedProcess | None:
        """A prepared sandbox running ``argv`` (``bwrap … -- GATE POLICY -- COMMAND``) with
        ``env`` and ``umask``, or None."""
        parts = split_gate(argv)
        if parts is None or any("\0" in a for a in argv):
            return None
        prefix, policy, command = tuple(parts[0]), parts[1], parts[2]
        ready = self._pick(prefix, env, umask)
        if ready is None:
            with self._lock:
                pending = self._live_pending()
            if pending:  # the moment bubblewrap takes to spawn
                with contextlib.suppress(Exception):  # it reports its own failures
                    # Shielded: a cancelled wait leaves the spawn (maybe another's) alone.
                    await asyncio.shield(asyncio.wrap_future(pending[0]))
                ready = self._pick(prefix, env, umask)
        if ready is None:
            return None
        data = job(policy, command)
        popen = ready.popen
        fits = len(data) <= MAX_COMMAND_BYTES and identities(prefix) == ready.files
        if not fits or popen.poll() is not None or popen.stdin is None or popen.stdout is None:
            self._drop(ready)
            return None
        # Followed before the job is handed over: once the gate has it, the command runs,
        # and a failure after that must not make the caller start it a second time.
        try:
            process = await PreparedProcess.attach(popen)
        except OSError as e:
            self._drop(ready)
            log.debug("the prepared sandbox could not be followed: %s", e)
            return None
        except BaseException:
            self._drop(ready)
            raise
        try:
            popen.stdin.write(data)  # fits the pipe: never waits
            popen.stdin.close()
        except OSError as e:  # its gate is gone, the job unread: nothing ran
            process.kill()
            self._drop(ready)
            log.debug("the prepared sandbox did not take the command: %s", e)
            return None
        process.refusals = ready.refusals
        return process

    def _pick(self, prefix: tuple[str, ...], env: Mapping[str, str], umask: int) -> _Ready | None:
        with self._lock:
            found = next((r for r in self._ready if r.serves(prefix, env, umask)), None)
            if found is not None:
                self._ready.remove(found)
        if found is not None and found.timer is not None:
            found.timer.cancel()
        return found

    # -- preparing them ---------------------------------------------------------------

    def prepare(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        umask: int,
        cwd: Path,
        *,
        want: int = 1,
        recheck: bool = False,
        expected: Identities | None = None,
    ) -> None:
        """Have ``want`` sandboxes like ``argv``'s (their gate waiting for the job) ready
        for the next commands (at most ``MOST`` of any kind). ``recheck``: replace those
        whose files changed since they were prepared (a command just ended). ``expected``:
        what the paths of ``argv``'s layout were when it was made; if any changed since (a
        command moved a socket's folder, put a link where a hidden file was), none is
        prepared from it: bubblewrap would make the missing ones on the host, through the
        links, before any gate runs. The next command makes its layout afresh."""
        parts = split_gate(argv)
        if parts is None or not CAN_FOLLOW:
            return
        prefix, wanted_env = tuple(parts[0]), dict(env)
        files = identities(prefix)  # before the mounts are made: a change later shows
        if expected is not None and not same_objects(expected, files):
            want = 0
        dropped: list[_Ready] = []
        with self._lock:
            if self._closed:
                return
            if recheck:
                dropped += [r for r in self._ready if r.prefix == prefix and r.files != files]
            kept = [r for r in self._ready if r not in dropped]
            same = sum(r.serves(prefix, wanted_env, umask) for r in kept)
            pending = self._live_pending()
            need = min(want, self._most) - same - len(pending)
            while need > 0 and len(kept) + len(pending) + need > self._most and kept:
                other = next((r for r in kept if not r.serves(prefix, wanted_env, umask)), None)
                if other is None:
                    break
                kept.remove(other)  # the oldest of another kind makes room
                dropped.append(other)
            need = min(need, self._most - len(kept) - len(pending))
            self._ready = kept
            for _ in range(max(0, need)):
                self._pending.append(
                    starter().submit(self._spawn, prefix, files, wanted_env, umask, cwd)
                )
        for ready in dropped:
            self._drop(ready)

    def _live_pending(self) -> list[Future[None]]:
        """Under the lock."""
        self._pending = [f for f in self._pending if not f.done()]
        return list(self._pending)

    def _spawn(
        self, prefix: tuple[str, ...], files: Identities, env: dict[str, str], umask: int, cwd: Path
    ) -> None:
        if identities(prefix) != files:
            return  # changed while this waited for its turn: the layout is not the tree's
        refusals = Refusals()
        try:
            started = popen(
                [*prefix, *waiting_argv(runtime(), refusals.write_fd)],
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                umask=umask,
                pass_fds=(refusals.write_fd,),
            )
        except BaseException as e:
            refusals.discard()
            log.debug("could not prepare a sandbox: %s", e)
            return
        refusals.close_writer()
        ready = _Ready(prefix, files, env, umask, started, refusals)
        ready.timer = threading.Timer(self._linger_s, self._expire, (ready,))
        ready.timer.daemon = True
        with self._lock:
            closed = self._closed
            if not closed:
                self._ready.append(ready)
                ready.timer.start()
        if closed:
            _discard(ready)

    def _expire(self, ready: _Ready) -> None:
        with self._lock:
            if ready not in self._ready:
                return
            self._ready.remove(ready)
        _discard(ready)

    def _drop(self, ready: _Ready) -> None:
        """Discard ``ready`` off the caller's thread (an event loop's, often)."""
        if ready.timer is not None:
            ready.timer.cancel()
        starter().submit(_discard, ready)

    def close(self) -> None:
        """Kill the prepared sandboxes (the workspace is closing); prepare no more."""
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, []
            pending = list(self._pending)
        for each in ready:
            if each.timer is not None:
                each.timer.cancel()
            _discard(each)
        for started in pending:  # one being started discards itself (closed)
            with contextlib.suppress(Exception):
                started.result(timeout=5.0)


def _discard(ready: _Ready) -> None:
    """Kill an unused sandbox and wait for it (any thread: SIGKILL is quick)."""
    started = ready.popen
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(started.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        started.wait(timeout=5.0)
    pipes: list[IO[bytes] | None] = [started.stdin, started.stdout]
    for pipe in pipes:
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    ready.refusals.discard()
