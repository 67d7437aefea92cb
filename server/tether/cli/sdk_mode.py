"""Print mode driven by a program: ``--input-format stream-json --output-format stream-json``.

This is how the Agent SDKs run Claude Code, and how they run Tether when ``cli_path``
points at it. Stdin carries prompts and the program's control requests and answers
(``cli/stream_input.py``); stdout carries Claude Code's messages (``cli/stream_json.py``)
and our control requests (``cli/control.py``).

The order of things follows Claude Code: control requests are answered as they arrive, even
while a turn runs (``interrupt`` must be); prompts run one turn each, in order; the session
opens with the first prompt, once ``initialize`` has registered the program's hooks and its
in-process MCP servers can be listed; each turn starts with ``system``/``init`` and ends
with ``result``. When stdin closes, the prompts still queued run, background tasks are
followed, and the process exits 0 if the last turn ended normally, else 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from tether.cli.callenv import caller_env
from tether.cli.control import ControlChannel, ControlError, parse_request
from tether.cli.driver import HostedServer, PermissionAsker, SessionDriver, TurnOutcome
from tether.cli.flags import STDIO_PROMPT_TOOL, PrintOptions
from tether.cli.permission_tool import mcp_permission_asker, stdio_asker
from tether.cli.render import Write
from tether.cli.run import exit_code, open_request
from tether.cli.sdk_hooks import SdkHooks
from tether.cli.sdk_requests import ControlAnswers
from tether.cli.stream_input import (
    ControlCancelLine,
    ControlRequestLine,
    ControlResponseLine,
    InputError,
    UserLine,
    parse_line,
    stdin_lines,
)
from tether.cli.stream_json import StreamJsonEncoder
from tether.core.hooks import Hooks
from tether.errors import ConfigError, SessionError
from tether.protocol.updates import Usage

STATE_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"


def sdk_server_names(servers: Mapping[str, Any]) -> list[str]:
    """The ``--mcp-config`` entries the program hosts itself (``"type": "sdk"``)."""
    return [
        name
        for name, config in servers.items()
        if isinstance(config, Mapping) and cast(Mapping[str, Any], config).get("type") == "sdk"
    ]


class SdkMode:
    def __init__(
        self,
        options: PrintOptions,
        driver: SessionDriver,
        write: Write,
        lines: Callable[[], AsyncIterator[str]] = stdin_lines,
    ) -> None:
        self.options = options
        self.driver = driver
        self.encoder = StreamJsonEncoder(write, partial=options.partial)
        self.channel = ControlChannel(write)
        self.answers = ControlAnswers(options, driver, self.encoder, lambda: self._open)
        self._lines = lines
        self._prompts: asyncio.Queue[UserLine | None] = asyncio.Queue()
        self._open = False
        self._states = caller_env().get(STATE_ENV) == "1"
        fresh = options.resume is None and not options.continue_latest
        self._session_id = (options.session_id or str(uuid.uuid4())) if fresh else None
        """A new session's id is known from the start (the lines before it carry it)."""
        if self._session_id is not None:
            self.encoder.session_id = self._session_id
        self._handlers: set[asyncio.Task[None]] = set()

    # -- the run --------------------------------------------------------------------------

    async def run(self) -> int:
        reader = asyncio.get_running_loop().create_task(self._read())
        code = 0
        try:
            while (line := await self._prompts.get()) is not None:
                code = await self._turn(line)
            if self._open:
                code = await self._background(code)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            for task in list(self._handlers):
                task.cancel()
            problems = await self.driver.close() if self._open else []
        for problem in problems:
            sys.stderr.write(f"[tether] error: {problem}\n")
        return 1 if problems else code

    async def _read(self) -> None:
        try:
            async for raw in self._lines():
                try:
                    line = parse_line(raw)
                except InputError as e:
                    sys.stderr.write(f"[tether] input line ignored: {e}\n")
                    continue
                if isinstance(line, UserLine):
                    self._prompts.put_nowait(line)
                elif isinstance(line, ControlRequestLine):
                    task = asyncio.get_running_loop().create_task(self._answer(line))
                    self._handlers.add(task)
                    task.add_done_callback(self._handlers.discard)
                elif isinstance(line, ControlResponseLine):
                    self.channel.deliver(line.response)
                elif isinstance(line, ControlCancelLine):
                    pass  # we answer every request at once: nothing to give up
        finally:
            self.channel.close("the program closed its input")
            self._prompts.put_nowait(None)

    def _state(self, state: str) -> None:
        if self._states:
            self.encoder.session_state(state)

    async def _turn(self, line: UserLine) -> int:
        if not self._open:
            try:
                await self._start()
            except (ConfigError, SessionError, ControlError) as e:
                self._fail(str(e))
                return 2
        self.encoder.begin_turn()
        self._state("running")
        self.encoder.init(self.driver.facts())
        outcome = await self.driver.prompt(line.blocks())
        self.encoder.result(outcome)
        if outcome.error is not None:
            # The result line carries it too; a person running the program reads stderr.
            sys.stderr.write(f"[tether] error: the turn failed: {outcome.error}\n")
        self._state("idle")
        return exit_code(outcome)

    def _fail(self, message: str) -> None:
        """A turn that could not start still ends in a ``result`` the program can read."""
        sys.stderr.write(f"tether: {message}\n")
        self.encoder.begin_turn()
        outcome = TurnOutcome("error", "model_error", message, Usage())
        self.encoder.result(outcome)

    async def _background(self, code: int) -> int:
        while await self.driver.background_pending(lambda _count: None):
            self.encoder.begin_turn()
            self.encoder.init(self.driver.facts())
            outcome = await self.driver.answer_background()
            if outcome is not None:
                self.encoder.result(outcome)
                code = exit_code(outcome)
        return code

    # -- opening the session ---------------------------------------------------------------

    async def _start(self) -> None:
        options, choices = self.options, self.answers.choices
        hosted_names = sdk_server_names(options.mcp_servers)
        hosted: list[HostedServer] = []
        if hosted_names:
            from tether.cli.sdk_mcp import HostedMcpClient  # MCP's SDK loads only when used

            for name in hosted_names:
                hosted.append(await HostedMcpClient(name, self.channel).connect())
        external = {k: v for k, v in options.mcp_servers.items() if k not in hosted_names}
        hooks = None
        if choices.hooks:
            hooks = SdkHooks(
                self.channel,
                choices.hooks,
                session_id=lambda: self.driver.facts().session_id,
                cwd=options.cwd,
                mode=lambda: self.driver.facts().mode,
                transcript_path=lambda: self.driver.facts().transcript_path or "",
                source="startup" if self._session_id is not None else "resume",
            )
            for event in hooks.unsupported:
                sys.stderr.write(f"[tether] SDK hooks for {event} never fire (no such event)\n")
        chosen: Hooks | None = hooks  # dataclasses.replace() is not type-checked
        request = replace(
            open_request(options, self._asker(), None),
            session_id=self._session_id,
            mode=choices.mode,
            model=choices.model,
            mcp_servers=external,
            hooks=chosen,
            hosted=hosted,
            agents=choices.agents,
        )
        facts = await self.driver.open(request)
        self._open = True
        self.driver.subscribe(lambda _turn, update: self.encoder.update(update))
        for note in facts.notes:
            sys.stderr.write(f"[tether] {note}\n")

    def _asker(self) -> PermissionAsker | None:
        tool = self.options.permission_prompt_tool
        if tool == STDIO_PROMPT_TOOL:
            return stdio_asker(self.channel, self._state, self.driver.interrupt)
        if tool is not None:
            return mcp_permission_asker(tool, self.driver)
        return None

    async def _answer(self, line: ControlRequestLine) -> None:
        try:
            payload = await self.answers.answer(parse_request(line.request))
        except (ControlError, ConfigError, SessionError) as e:
            self.channel.respond_error(line.request_id, str(e))
            return
        self.channel.respond(line.request_id, payload)
