"""Run a shell command as its own process group, and make sure the whole group ends with it.

``bash -c`` runs in a new session (``start_new_session``), so the command and everything it
spawns share one process group we can signal at once: on timeout, on cancellation, and when
background children still hold the output pipe after the shell has exited. SIGTERM first,
SIGKILL after a short grace. stdout and stderr go to the same pipe, so they stay interleaved
in the order the command wrote them. A process that leaves the group on purpose (``setsid``)
is out of reach here; the sandbox layer is where that is contained (bubblewrap's own PID
namespace dies with it).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import os
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tether.core.environ import Caller, process_env, process_umask
from tether.tools.context import PreparedStart, ShellProcess
from tether.tools.context import Wrap as Wrap
from tether.tools.follow import CAN_FOLLOW, FollowedProcess, popen, starter

KILL_GRACE_S = 1.0
DRAIN_S = 0.25
"""After the shell exits, how long to wait for children that still hold the output pipe."""
EMIT_INTERVAL_S = 0.2
POLL_S = 0.05
# Nothing can answer a prompt or page output here; make the usual suspects not wait for it.
QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat"}


class OutputBuffer:
    """Keeps the head and the tail of a stream within ``max_chars`` and counts dropped lines."""

    def __init__(self, max_chars: int) -> None:
        self._max = max(2, max_chars)
        self._half = self._max // 2
        self._head = ""
        self._tail = ""
        self._dropped = 0
        self._dropped_lines = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
        self.changed = False

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if not text:
            return
        self.changed = True
        room = self._half - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        self._tail += text
        if len(self._tail) > 2 * self._max:  # trim in batches, not on every chunk
            cut = len(self._tail) - (self._max - self._half)
            self._dropped += cut
            self._dropped_lines += self._tail.count("\n", 0, cut)
            self._tail = self._tail[cut:]

    def text(self) -> str:
        if not self._dropped and len(self._head) + len(self._tail) <= self._max:
            return self._head + self._tail
        cut = max(0, len(self._tail) - (self._max - self._half))
        lines = self._dropped_lines + self._tail.count("\n", 0, cut)
        return f"{self._head}\n\n[... {lines} lines cut ...]\n\n{self._tail[cut:]}"


@dataclass(frozen=True)
class ShellResult:
    output: str
    exit_code: int | None
    """None when the command was stopped by us (timeout)."""
    timed_out: bool = False
    stopped_stragglers: bool = False
    """Background children kept the output open after the shell exited and were stopped."""


def _group_alive(pgid: int) -> bool:
    """Does the group still have a live member? Zombies do not count: PID 1 reaps them late."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def kill_process_group(pgid: int, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the group, wait up to ``grace_s`` for it to go, then SIGKILL what is left."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_s
    try:
        while loop.time() < deadline:
            await asyncio.sleep(0.02)
            if not await asyncio.to_thread(_group_alive, pgid):
                return
    finally:
        # Also runs when we are cancelled while waiting: nothing in the group may survive.
        _signal_group(pgid, signal.SIGKILL)


async def _spawn(
    argv: list[str],
    *,
    cwd: Path,
    stdout: int | IO[bytes],
    env: dict[str, str],
    umask: int,
    pass_fds: tuple[int, ...] = (),
) -> ShellProcess:
    """Start ``argv`` as a new process group, off the event loop where the platform lets
    the loop follow it (``follow.py``). Cancelled while starting, the group is killed
    before the cancellation goes on: the shell may already be running (and have started
    children) before its process is handed back, and killing the shell alone would leave
    its children holding the output pipe."""
    if not CAN_FOLLOW:
        return await _spawn_on_loop(
            argv, cwd=cwd, stdout=stdout, env=env, umask=umask, pass_fds=pass_fds
        )
    loop = asyncio.get_running_loop()
    start = functools.partial(
        popen,
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        env=env,
        umask=umask,
        pass_fds=pass_fds,
    )
    starting = loop.run_in_executor(starter(), start)
    try:
        started = await asyncio.shield(starting)
    except asyncio.CancelledError:
        await asyncio.shield(_abandon_popen(starting))
        raise
    try:
        return await FollowedProcess.attach(started)
    except BaseException:
        await asyncio.shield(_end_popen(started))
        raise


async def _abandon_popen(starting: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    try:
        started = await starting
    except Exception:
        return  # it did not start
    await _end_popen(started)


async def _end_popen(started: subprocess.Popen[bytes]) -> None:
    await kill_process_group(started.pid)
    with contextlib.suppress(ProcessLookupError):
        started.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        await asyncio.to_thread(started.wait, 1.0)
    for pipe in (started.stdout,):
        if pipe is not None:
            pipe.close()


async def _spawn_on_loop(
    argv: list[str],
    *,
    cwd: Path,
    stdout: int | IO[bytes],
    env: dict[str, str],
    umask: int,
    pass_fds: tuple[int, ...],
) -> ShellProcess:
    spawning = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=stdout,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=env,
            umask=umask,
            pass_fds=pass_fds,
        )
    )
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        await asyncio.shield(_abandon(spawning))
        raise


async def _abandon(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    try:
        proc = await spawning
    except Exception:
        return  # it did not start
    await kill_process_group(proc.pid)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    # Reap it, so its transport is closed on this loop and not at garbage collection.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 1.0)


def shell_argv(command: str, wrap: Wrap | None) -> list[str]:
    argv = ["bash", "-c", command]
    return wrap(argv) if wrap is not None else argv


def shell_env(extra: Mapping[str, str] | None, caller: Caller | None = None) -> dict[str, str]:
    """A command's environment: this process's (for a client of the warm daemon, that
    caller's whole environment), under ``extra`` (settings ``env``), without model keys
    whichever layer set them."""
    return {**process_env(caller, credentials=False, settings=extra), **QUIET_ENV}


async def run_shell(
    command: str,
    *,
    cwd: Path,
    timeout_s: float,
    max_output_chars: int,
    on_output: Callable[[str], None] | None = None,
    wrap: Wrap | None = None,
    env: Mapping[str, str] | None = None,
    caller: Caller | None = None,
    prepared: PreparedStart | None = None,
    pass_fds: tuple[int, ...] = (),
    started: Callable[[int], None] | None = None,
) -> ShellResult:
    """Run ``command`` to completion; ``on_output`` gets the output so far, throttled.
    ``caller``: whose environment and umask it runs with (None: this process's).
    ``prepared``: where a sandbox started ahead for this very command line may be taken.
    ``pass_fds``: descriptors the (wrapped) command inherits. ``started``: told the pid of
    the process spawned here (a prepared one is followed by whoever prepared it)."""
    argv, full_env, umask = shell_argv(command, wrap), shell_env(env, caller), process_umask(caller)
    proc: ShellProcess | None = (
        await prepared(argv, env=full_env, umask=umask) if prepared else None
    )
    if proc is None:
        proc = await _spawn(
            argv,
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            env=full_env,
            umask=umask,
            pass_fds=pass_fds,
        )
        if started is not None:
            started(proc.pid)
    buf = OutputBuffer(max_output_chars)
    reader = asyncio.create_task(_pump(proc, buf))
    ticker = asyncio.create_task(_tick(buf, on_output)) if on_output is not None else None
    timed_out = stragglers = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                # Not proc.wait(): it also waits for the pipe to close, which a background
                # child can hold open forever. Watch the shell's own exit status instead.
                while not reader.done() and proc.returncode is None:
                    await asyncio.wait({reader}, timeout=POLL_S)
                done, _ = await asyncio.wait({reader}, timeout=DRAIN_S)
                stragglers = not done
                if done:
                    await proc.wait()
        except TimeoutError:
            timed_out = True
        if timed_out or stragglers:
            await kill_process_group(proc.pid)
    except BaseException:
        await asyncio.shield(kill_process_group(proc.pid))
        raise
    finally:
        if ticker is not None:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
        await _finish_reader(reader)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()  # only if the shell itself is somehow still there
        # Reap it, so its transport is closed on this loop and not at garbage collection.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 1.0)
    buf.feed(b"", final=True)
    if on_output is not None:
        on_output(buf.text())
    exit_code = None if timed_out else proc.returncode
    return ShellResult(buf.text(), exit_code, timed_out, stragglers)


async def _pump(proc: ShellProcess, buf: OutputBuffer) -> None:
    assert proc.stdout is not None
    while chunk := await proc.stdout.read(1 << 16):
        buf.feed(chunk)


async def _tick(buf: OutputBuffer, on_output: Callable[[str], None]) -> None:
    while True:
        await asyncio.sleep(EMIT_INTERVAL_S)
        if buf.changed:
            buf.changed = False
            on_output(buf.text())


async def _finish_reader(reader: asyncio.Task[None]) -> None:
    # Once the group is dead the pipe closes; a process that escaped the group must not hang us.
    done, _ = await asyncio.wait({reader}, timeout=1.0)
    if not done:
        reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader


async def run_shell_to_file(
    command: str,
    *,
    cwd: Path,
    output_path: Path,
    wrap: Wrap | None = None,
    env: Mapping[str, str] | None = None,
    caller: Caller | None = None,
    pass_fds: tuple[int, ...] = (),
    started: Callable[[int], None] | None = None,
) -> int:
    """Run ``command`` with its output appended to ``output_path``; returns the exit code.
    Cancelling kills the process group. ``started``: told the pid of the process."""
    out = await asyncio.to_thread(output_path.open, "ab")
    try:
        proc = await _spawn(
            shell_argv(command, wrap),
            cwd=cwd,
            stdout=out,
            env=shell_env(env, caller),
            umask=process_umask(caller),
            pass_fds=pass_fds,
        )
    finally:
        out.close()  # the child holds its own copy of the descriptor
    if started is not None:
        started(proc.pid)
    try:
        return await proc.wait()
    except BaseException:
        await asyncio.shield(kill_process_group(proc.pid))
        raise
