"""Run one command hook: JSON on stdin, exit code and output back, bounded in time.

A hook runs as ``bash -c COMMAND`` in its own process group, from the workspace root, with
``CLAUDE_PROJECT_DIR`` (and ``TETHER_PROJECT_DIR``) set so hooks written for Claude Code
work unchanged. It never hangs a turn: past its timeout the whole group is killed; once the
hook itself has exited, children still holding its output get a short grace and are then
killed too; a hook that does not read its stdin is fine. Cancelling the turn kills it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.core.environ import INHERIT_UMASK, Caller, process_env
from tether.tools.shell import kill_process_group

MAX_OUTPUT = 1 << 20
DRAIN_S = 0.25
POLL_S = 0.02


@dataclass(frozen=True)
class HookRun:
    command: str
    exit_code: int | None
    """None when the hook did not finish (timeout) or could not start."""
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None


async def _read(stream: asyncio.StreamReader | None) -> bytes:
    if stream is None:
        return b""
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(1 << 16):
        if size < MAX_OUTPUT:
            chunks.append(chunk[: MAX_OUTPUT - size])
        size += len(chunk)
    return b"".join(chunks)


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    if stdin is None:
        return
    # A hook that never reads its input must not block us, nor fail the run.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()
        await stdin.wait_closed()


def hook_env(
    root: Path, extra: Mapping[str, str] | None = None, caller: Caller | None = None
) -> dict[str, str]:
    """A hook's environment: the user's whole environment, keys included, as Claude Code
    gives its hooks (``caller``: the warm daemon's client's, none of the daemon's own),
    under the settings' ``env`` (``extra``)."""
    return {
        **process_env(caller, credentials=True, settings=extra),
        "CLAUDE_PROJECT_DIR": str(root),
        "TETHER_PROJECT_DIR": str(root),
    }


async def run_hook(
    command: str,
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    umask: int = INHERIT_UMASK,
) -> HookRun:
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=dict(env),
            umask=umask,
        )
    except OSError as e:
        return HookRun(command, None, error=f"could not start: {e}")
    data = json.dumps(payload, default=str).encode()
    readers = asyncio.gather(_read(proc.stdout), _read(proc.stderr))
    feeder = asyncio.ensure_future(_feed(proc.stdin, data))
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                # Not proc.wait(): it also waits for the pipes, which a child can hold open.
                while proc.returncode is None and not readers.done():
                    await asyncio.wait({readers}, timeout=POLL_S)
                if proc.returncode is None:
                    await proc.wait()  # its output is closed: waiting on it is safe now
        except TimeoutError:
            timed_out = True
        done, _ = await asyncio.wait({readers}, timeout=DRAIN_S)
        if timed_out or not done:
            await kill_process_group(proc.pid, grace_s=0.5)
    except BaseException:
        await asyncio.shield(kill_process_group(proc.pid, grace_s=0.2))
        readers.cancel()
        feeder.cancel()
        raise
    try:
        async with asyncio.timeout(1.0):
            out, err = await readers
    except TimeoutError:  # something escaped the group and holds the pipes: stop waiting
        readers.cancel()
        out, err = b"", b""
    feeder.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await feeder
    return HookRun(
        command,
        None if timed_out else proc.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        timed_out=timed_out,
        error=f"timed out after {timeout_s:g}s" if timed_out else None,
    )
