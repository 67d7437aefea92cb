"""Getting the daemon ready for its first call, and keeping it lean over a long day.

A daemon that only imported what print mode needs still paid, on its first call, for
everything done once per process on first use: the SDK's async backend, the TLS trust
store, argparse's messages, the sandbox probe, the shell parser, pydantic's schemas of the
tools, the prompts. Its first call took as long as a cold process (hundreds of milliseconds
against tens) and raced the import thread for the interpreter. So as soon as it listens, a
thread of its own runs one whole print-mode call, offline and quiet: a scripted model
running one Bash command in a throwaway workspace, with no user or project settings; calls
that arrive meanwhile wait for it to finish (never longer than it takes), and
``tether daemon start`` returns once it has (``tether/daemonInfo``: ``warm``).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import logging
import os
import platform
import tempfile
import threading
from pathlib import Path

from tether.cli.callenv import calling_with
from tether.core.environ import Caller, current_umask
from tether.daemon.printing import RunCommand, silenced
from tether.warmup import settle_start_up, warm_network

log = logging.getLogger(__name__)

MODULES = (
    "tether.cli.run",
    "tether.cli.inprocess",
    "tether.cli.sdk_mode",
    "tether.providers.anthropic",
    # The async backend the HTTP client's connection pool loads on its first request.
    "anyio._backends._asyncio",
)
"""Not the Anthropic SDK: a key or token never needs it (``anthropic_transport``)."""

WARM_UP_ARGV = (
    "-p",
    "warm up",
    "--setting-sources",
    "project",
    "--strict-mcp-config",
    "--allowedTools",
    "Bash(true)",
    "--output-format",
    "json",
)
WARM_UP_TURNS = [
    [{"type": "tool_use", "name": "Bash", "input": {"command": "true"}}],
    [{"type": "text", "text": "Warm."}],
]


def warm_up(run_command: RunCommand, done: threading.Event) -> None:
    """Everything a first call would do once, then ``done`` (set even when a step fails:
    warming is best effort, and calls wait for it)."""
    try:
        for module in MODULES:
            try:
                importlib.import_module(module)
            except Exception:
                log.debug("warming %s failed", module, exc_info=True)
        warm_network()
        _warm_call(run_command)
        # What start-up built, collected and frozen now, off any call: later full
        # collections walk only what calls make (``warmup.settle_start_up``).
        settle_start_up()
    finally:
        done.set()


def _warm_call(run_command: RunCommand) -> None:
    with tempfile.TemporaryDirectory(prefix="tether-warm-up-") as raw:
        root = Path(raw)
        (root / "turns.json").write_text(json.dumps(WARM_UP_TURNS), encoding="utf-8")
        workspace = root / "workspace"
        workspace.mkdir()
        caller = Caller(
            {
                "PATH": os.environ.get("PATH", os.defpath),
                "HOME": os.environ.get("HOME", raw),
                "TETHER_DATA_DIR": str(root / "data"),
            },
            cwd=workspace,
            umask=current_umask(),
        )
        argv = [*WARM_UP_ARGV, "--model", f"scripted:{root / 'turns.json'}"]
        try:
            with silenced(), calling_with(caller):
                code = run_command(argv, cwd=workspace)
            if code != 0:
                log.debug("the warm-up call ended with %s", code)
        except BaseException:
            log.debug("the warm-up call failed", exc_info=True)


MALLOC_ARENAS = 2
M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the number of malloc arenas (``malloc.h``)."""


def few_malloc_arenas() -> None:
    """Each print-mode call runs on a thread of its own, and glibc gives threads arenas of
    their own (up to eight per core), where what a call frees stays, fragmented, in the
    daemon's memory. The interpreter lock serialises allocation anyway, so two arenas cost
    no waiting and keep the daemon's memory flat over a long day (``bench/soak.py``). First
    thing, before any thread starts; other C libraries are left as they are."""
    if platform.libc_ver()[0] != "glibc":
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, MALLOC_ARENAS)
