"""``tether acp``: the Agent Client Protocol on stdio, one JSON-RPC message per line.

Nothing but protocol messages may reach stdout. The protocol keeps private duplicates of
the original stdin and stdout; descriptors 0 and 1 then become ``/dev/null`` and stderr, so
a stray ``print``, a C extension or a child process (hook, MCP server) that inherits them
can neither corrupt the outgoing stream nor swallow incoming messages.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading

from acp import run_agent

from tether.acp.agent import TetherAgent
from tether.acp.stdio import open_streams
from tether.core.executor import install_default_executor
from tether.warmup import warm_engine

log = logging.getLogger(__name__)


def serve(model: str | None = None) -> int:
    stdin_fd, stdout_fd = _claim_stdio()
    agent = TetherAgent(model)
    # The engine and the model providers, imported before the first prompt needs them (and the
    # heap they build, with start-up's, frozen out of the full GC collections' way).
    threading.Thread(target=warm_engine, name="tether-warm-imports", daemon=True).start()
    code = 0
    try:
        asyncio.run(_serve(agent, stdin_fd, stdout_fd))
    except KeyboardInterrupt:
        code = 130
    # Python's exit joins every worker thread: one blocked for good (a hung read) must not
    # keep a dead editor's agent alive.
    sys.stderr.flush()
    os._exit(code)


def _claim_stdio() -> tuple[int, int]:
    sys.stdout.flush()
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out


async def _serve(agent: TetherAgent, stdin_fd: int, stdout_fd: int) -> None:
    install_default_executor()  # a thread stuck for good must not hold the exit
    reader, writer, guard = await open_streams(stdin_fd, stdout_fd)
    try:
        # session/resume and session/close are "unstable" in this SDK release, though
        # stable in the spec; fork is routed too and refused by the agent.
        await run_agent(agent, writer, reader, use_unstable_protocol=True)
    finally:
        guard.cancel()
        await agent.shutdown()
        log.info("ACP connection closed")
