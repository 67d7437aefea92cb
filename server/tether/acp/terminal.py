"""Bash in the client's own terminal (``terminal/*``), for clients that offer one.

The user watches the command run in the editor's terminal view, which stays on the tool
card after the terminal is released. The permission pipeline is unchanged: only where the
command runs differs. Background commands still run in the daemon (their output goes to a
task file the agent reads with TaskOutput), and clients without terminals (CodeCompanion)
get the daemon's own shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
from typing import Any

import acp.schema as wire
from acp import Client, RequestError

from tether.engine.engine import QueryEngine
from tether.protocol.updates import ToolCallUpdate
from tether.tools.base import Tool, ToolResult
from tether.tools.bash import BashInput, render_result
from tether.tools.context import ToolConfig, ToolContext
from tether.tools.shell import QUIET_ENV, OutputBuffer, ShellResult

log = logging.getLogger(__name__)

RELEASE_TIMEOUT_S = 2.0
BYTES_PER_CHAR = 4
"""Worst-case UTF-8 size of a character: the byte limit must not cut below the char limit."""


class ClientTerminals:
    """Runs commands in client terminals and remembers which tool call shows which."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.by_tool_call: dict[str, str] = {}

    async def run(self, inp: BashInput, ctx: ToolContext) -> ToolResult:
        cfg = ctx.config
        timeout_ms = min(inp.timeout or cfg.bash_default_timeout_ms, cfg.bash_max_timeout_ms)
        created = await self.client.create_terminal(
            session_id=ctx.session_id,
            command="bash",
            args=["-c", inp.command],
            cwd=str(ctx.cwd),
            env=[wire.EnvVariable(name=k, value=v) for k, v in QUIET_ENV.items()],
            output_byte_limit=cfg.bash_max_output_chars * BYTES_PER_CHAR,
        )
        terminal_id = created.terminal_id
        self.by_tool_call[ctx.tool_use_id] = terminal_id
        # From now on every update of this call embeds the terminal (see mapping).
        ctx.emit(ToolCallUpdate(tool_call_id=ctx.tool_use_id, status="in_progress"))
        try:
            result = await self._wait(ctx.session_id, terminal_id, timeout_ms / 1000, cfg)
        finally:
            # Always release, also when the turn is cancelled: release kills a running
            # command, and the client frees the terminal.
            await asyncio.shield(self._release(ctx.session_id, terminal_id))
        return render_result(inp.command, result, timeout_ms)

    async def _wait(
        self, session_id: str, terminal_id: str, timeout_s: float, cfg: ToolConfig
    ) -> ShellResult:
        ids = {"session_id": session_id, "terminal_id": terminal_id}
        timed_out = False
        code: int | None = None
        try:
            async with asyncio.timeout(timeout_s):
                status = await self.client.wait_for_terminal_exit(**ids)
            code = exit_code(status.exit_code, status.signal)
        except TimeoutError:
            timed_out = True
            await self.client.kill_terminal(**ids)
        output = await self.client.terminal_output(**ids)
        text = clip(output.output, cfg.bash_max_output_chars, output.truncated)
        return ShellResult(text, code, timed_out)

    async def _release(self, session_id: str, terminal_id: str) -> None:
        try:
            async with asyncio.timeout(RELEASE_TIMEOUT_S):
                await self.client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        except (RequestError, ConnectionError, TimeoutError) as e:
            log.info("terminal/release %s failed: %s", terminal_id, e)


def exit_code(code: int | None, signal_name: str | None) -> int:
    """An exit status as the Bash renderer reads it: negative for a signal."""
    if code is not None:
        return code
    if signal_name:
        with contextlib.suppress(KeyError):
            return -signal.Signals[signal_name.upper()].value
        return -signal.SIGKILL.value
    return 1  # neither code nor signal: the client could not tell; not a success


def clip(output: str, max_chars: int, truncated: bool) -> str:
    buffer = OutputBuffer(max_chars)
    buffer.feed(output.encode("utf-8", "surrogatepass"), final=True)
    text = buffer.text()
    return f"[... earlier output was cut by the editor ...]\n{text}" if truncated else text


def use_client_terminals(engine: QueryEngine, terminals: ClientTerminals) -> None:
    """Swap the session's Bash for one that runs foreground commands in client terminals."""
    base: Tool[Any] | None = engine.tools.get("Bash")
    if base is None:  # removed by the user's rules
        return
    run_locally = base.call

    async def call(inp: BashInput, ctx: ToolContext) -> ToolResult:
        if inp.run_in_background or not inp.command.strip():
            return await run_locally(inp, ctx)
        return await terminals.run(inp, ctx)

    engine.tools.replace(dataclasses.replace(base, call=call))
