"""A scripted ACP client: records what the agent sends, answers what it asks.

It serves ``fs/*`` from the workspace (with optional unsaved buffers that shadow the disk),
``terminal/*`` with real subprocesses, and answers permission questions from a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp.schema as wire
from acp import RequestError


@dataclass
class FakeTerminal:
    command: list[str]
    proc: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    released: bool = False
    pump: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output += chunk

    async def wait(self) -> wire.WaitForTerminalExitResponse:
        code = await self.proc.wait()
        if self.pump is not None:
            await self.pump
        if code < 0:
            return wire.WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return wire.WaitForTerminalExitResponse(exit_code=code)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


class ScriptedClient:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[wire.RequestPermissionRequest] = []
        self.answers: list[str] = []
        """Option ids to pick, in order; "cancel" answers cancelled, "hold" waits for
        ``cancelled`` to be set and then answers cancelled (what a client does after
        session/cancel)."""
        self.default_answer = "allow_once"
        self.cancelled = asyncio.Event()
        self.buffers: dict[str, str] = {}
        """Unsaved editor buffers by absolute path: reads see these, not the disk."""
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, FakeTerminal] = {}
        self._ids = itertools.count(1)

    # -- what the agent sent --------------------------------------------------------------

    def updates_of(self, session_id: str, kind: str | None = None) -> list[Any]:
        return [
            u
            for s, u in self.updates
            if s == session_id and (kind is None or u.session_update == kind)
        ]

    async def wait_for(self, predicate: Any, timeout: float = 10) -> Any:
        async def poll() -> Any:
            while True:
                for session_id, update in list(self.updates):
                    if predicate(session_id, update):
                        return update
                await asyncio.sleep(0.01)

        return await asyncio.wait_for(poll(), timeout)

    # -- acp.Client ---------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self,
        session_id: str,
        tool_call: wire.ToolCallUpdate,
        options: list[wire.PermissionOption],
        **kwargs: Any,
    ) -> wire.RequestPermissionResponse:
        self.permission_requests.append(
            wire.RequestPermissionRequest(
                session_id=session_id, tool_call=tool_call, options=options
            )
        )
        answer = self.answers.pop(0) if self.answers else self.default_answer
        if answer == "hold":
            await self.cancelled.wait()
            answer = "cancel"
        if answer == "cancel":
            return wire.RequestPermissionResponse(outcome=wire.DeniedOutcome(outcome="cancelled"))
        return wire.RequestPermissionResponse(
            outcome=wire.AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> wire.ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return wire.ReadTextFileResponse(content=self.buffers[path])
        try:
            return wire.ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise RequestError.resource_not_found(path)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> wire.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers.pop(path, None)  # the editor saves what the agent wrote
        Path(path).write_text(content)
        return wire.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[wire.EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> wire.CreateTerminalResponse:
        proc = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={**os.environ, **{e.name: e.value for e in env or []}},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = FakeTerminal([command, *(args or [])], proc)
        terminal.pump = asyncio.create_task(terminal.read())
        terminal_id = f"term-{next(self._ids)}"
        self.terminals[terminal_id] = terminal
        return wire.CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, terminal_id: str) -> FakeTerminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise RequestError.invalid_params({"terminalId": terminal_id})
        return terminal

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> wire.TerminalOutputResponse:
        terminal = self._terminal(terminal_id)
        status = None
        if terminal.proc.returncode is not None:
            status = wire.TerminalExitStatus(**(await terminal.wait()).model_dump())
        return wire.TerminalOutputResponse(
            output=terminal.output.decode(errors="replace"), truncated=False, exit_status=status
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> wire.WaitForTerminalExitResponse:
        return await self._terminal(terminal_id).wait()

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> wire.KillTerminalResponse:
        self._terminal(terminal_id).kill()
        return wire.KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> wire.ReleaseTerminalResponse:
        terminal = self._terminal(terminal_id)
        terminal.kill()
        await terminal.wait()
        terminal.released = True
        return wire.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def close(self) -> None:
        for terminal in self.terminals.values():
            terminal.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(terminal.wait(), 5)
