"""Print mode driven by a program: ``--input-format stream-json --output-format stream-json``.

This is how the Agent SDKs run Claude Code, and how they run Tether when ``cli_path``
points at it. Stdin carries prompts and the program's control requests and answers
(``cli/stream_input.py``); stdout carries Claude Code's messages (``cli/stream_json.py``)
and our control requests (``cli/control.py``).

The order of things follows Claude Code: control requests are answered as they arrive, even
while a turn runs (``interrupt`` must be); prompts run one turn each, in order; the session
opens with the first prompt, once ``initialize`` has registered the program's choices (its
hooks, agents, MCP servers: ``cli/sdk_choices.py``) and its in-process MCP servers can be
listed; with ``--await-initialize`` the first prompt waits for ``initialize``. Each turn
starts with ``system``/``init`` and ends with ``result``. When stdin closes (or the program
sends ``end_session``), the prompts still queued run, background tasks are followed, and the
process exits 0 if the last turn ended normally, else 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

from tether.cli.callenv import caller_env
from tether.cli.control import ControlChannel, ControlError
from tether.cli.driver import PermissionAsker, SessionDriver, TurnOutcome
from tether.cli.flags import STDIO_PROMPT_TOOL, PrintOptions
from tether.cli.permission_tool import mcp_permission_asker, stdio_asker
from tether.cli.render import Write
from tether.cli.run import exit_code, open_request
from tether.cli.sdk_hooks import SdkHooks
from tether.cli.sdk_prompts import Entry, HeldPrompt, Prompt, Prompts, RefusedPrompt
from tether.cli.sdk_requests import ControlAnswers
from tether.cli.sdk_servers import SdkServers
from tether.cli.sdk_wire import RequestRefused, parse_request
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
from tether.engine.prompt_input import prompt_text
from tether.errors import ConfigError, SessionError
from tether.protocol.content import ContentBlock
from tether.protocol.updates import SessionUpdate, Usage, UsageUpdate

STATE_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"


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
        asks = options.permission_prompt_tool is not None
        self.encoder = StreamJsonEncoder(write, partial=options.partial, asks=asks)
        self.channel = ControlChannel(write)
        self.servers = SdkServers(self.channel)
        self.servers.announce(options.mcp_servers)
        self._prompts = Prompts()
        self.answers = ControlAnswers(
            options, driver, self.encoder, self.servers, self._prompts, lambda: self._open
        )
        self._lines = lines
        self._initialized = asyncio.Event()
        self._open = False
        self._states = caller_env().get(STATE_ENV) == "1"
        fresh = options.resume is None and not options.continue_latest
        self._session_id = (options.session_id or str(uuid.uuid4())) if fresh else None
        """A new session's id is known from the start (the lines before it carry it)."""
        if self._session_id is not None:
            self.encoder.session_id = self._session_id
        self._handlers: set[asyncio.Task[None]] = set()
        self._hooks: SdkHooks | None = None

    # -- the run --------------------------------------------------------------------------

    async def run(self) -> int:
        reader = asyncio.get_running_loop().create_task(self._read())
        code = 0
        try:
            while (entry := await self._prompts.get()) is not None:
                if isinstance(entry, RefusedPrompt):
                    self._fail(entry.error)
                    code = 1
                elif isinstance(entry, HeldPrompt):
                    code = await self._held()
                else:
                    code = await self._turn(entry)
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
                    if e.kind == "user":
                        self._prompts.put(RefusedPrompt(str(e)))
                    elif e.kind == "control_request" and e.request_id is not None:
                        self.channel.respond_error(e.request_id, str(e))
                    else:
                        sys.stderr.write(f"[tether] input line ignored: {e}\n")
                    continue
                if isinstance(line, UserLine):
                    self._prompts.put_line(line)
                elif isinstance(line, ControlRequestLine):
                    task = asyncio.get_running_loop().create_task(self._answer(line))
                    self._handlers.add(task)
                    task.add_done_callback(self._handlers.discard)
                elif isinstance(line, ControlResponseLine):
                    self.channel.deliver(line.response)
                elif isinstance(line, ControlCancelLine):
                    pass  # we answer every request at once: nothing to give up
        finally:
            self._initialized.set()  # nothing waits for an initialize that cannot come
            self.channel.close("the program closed its input")
            self._prompts.end()

    def _state(self, state: str) -> None:
        if self._states:
            self.encoder.session_state(state)

    async def _opened(self) -> bool:
        """The session is open (the first prompt opens it); False when it cannot be (the
        ``result`` says why)."""
        if not self._open:
            try:
                await self._start()
            except (ConfigError, SessionError, ControlError, RequestRefused) as e:
                self._fail(str(e))
                return False
        return True

    async def _held(self) -> int:
        """A prompt kept for the next one: Claude Code answers it with an empty result."""
        if not await self._opened():
            return 2
        self.encoder.begin_turn()
        await self.driver.ready()
        self.encoder.init(self.driver.facts())
        self.encoder.result(TurnOutcome("end_turn", "completed", None, Usage()))
        return 0

    async def _turn(self, prompt: Prompt) -> int:
        if not await self._opened():
            return 2
        self.encoder.begin_turn()
        self._state("running")
        await self.driver.ready()  # the init line lists the MCP servers' tools
        self.encoder.init(self.driver.facts())
        outcome = await self._run_folding(prompt.blocks)
        self.encoder.result(outcome, prompt_text(prompt.blocks))
        if outcome.error is not None and outcome.reason != "hook_stopped":
            # The result line carries it too; a person running the program reads stderr.
            sys.stderr.write(f"[tether] error: the turn failed: {outcome.error}\n")
        self._state("idle")
        return exit_code(outcome)

    async def _run_folding(self, blocks: list[ContentBlock]) -> TurnOutcome:
        """Run a turn; prompts the program sends meanwhile join it at its next boundary (as
        Claude Code folds them into the running turn). Those it did not take in (sent after
        its last boundary) run next, in their order."""
        turn = asyncio.ensure_future(self.driver.prompt(blocks))
        folded: list[tuple[Prompt, asyncio.Future[TurnOutcome | None]]] = []
        while not turn.done():
            arrived = asyncio.ensure_future(self._prompts.wait())
            await asyncio.wait({turn, arrived}, return_when=asyncio.FIRST_COMPLETED)
            if turn.done():
                arrived.cancel()
                break
            took = False
            while (more := self._prompts.take_prompt()) is not None:
                took = True
                folded.append((more, asyncio.ensure_future(self.driver.fold(more.blocks))))
            if not took:  # next is the end, or a prompt that cannot run: after this turn
                await asyncio.wait({turn})
        left: list[Prompt] = []
        for prompt, joined in folded:
            try:
                taken = await joined
            except (ConfigError, SessionError):
                taken = None  # run as a turn of its own, which says what is wrong
            if taken is None:
                left.append(prompt)
        self._prompts.put_back(list[Entry](left))
        return turn.result()

    def _fail(self, message: str) -> None:
        """A turn that could not start still ends in a ``result`` the program can read (with
        an id: the session asked for, or a new one when none opened)."""
        sys.stderr.write(f"tether: {message}\n")
        if not self.encoder.session_id:
            self.encoder.session_id = self.options.resume or str(uuid.uuid4())
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
        if options.await_initialize and not choices.initialized:
            await self._initialized.wait()
            if not choices.initialized:
                raise RequestRefused(
                    "--await-initialize: the program closed its input before initialize"
                )
        hosted = await self.servers.connect()
        hooks = self._hooks = None
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
                sys.stderr.write(f"[tether] SDK hooks for {event} never fire in Tether\n")
            self._hooks = hooks
        chosen: Hooks | None = hooks  # dataclasses.replace() is not type-checked
        for note in options.notes:
            sys.stderr.write(f"[tether] {note}\n")
        base = open_request(options, self._asker(), None)
        request = replace(
            base,
            session_id=self._session_id or options.session_id,
            mode=choices.mode,
            model=choices.model,
            deny=[*base.deny, *choices.deny, *self.servers.deny],
            settings=choices.settings_overrides(dict(base.settings), self.servers.ask),
            system_prompt=choices.system_prompt
            if choices.system_prompt is not None
            else base.system_prompt,
            append_system_prompt="\n\n".join(
                p for p in (base.append_system_prompt, choices.append_system_prompt) if p
            )
            or None,
            title=choices.title,
            mcp_servers={n: c for n, c in self.servers.external.items()},
            hooks=chosen,
            hosted=hosted,
            agents=choices.agents,
        )
        facts = await self.driver.open(request)
        self._open = True
        self.driver.subscribe(self._update)
        for note in facts.notes:
            sys.stderr.write(f"[tether] {note}\n")

    def _update(self, _turn: str, update: SessionUpdate) -> None:
        if isinstance(update, UsageUpdate):
            self.answers.usage = update
        self.encoder.update(update)

    def _asker(self) -> PermissionAsker | None:
        tool = self.options.permission_prompt_tool
        if tool == STDIO_PROMPT_TOOL:
            decide = self._hooks.permission_request if self._hooks is not None else None
            return stdio_asker(
                self.channel, self._state, self.driver.interrupt, self.driver, decide
            )
        if tool is not None:
            return mcp_permission_asker(tool, self.driver)
        return None

    async def _answer(self, line: ControlRequestLine) -> None:
        try:
            request = parse_request(line.request)
            payload = await self.answers.answer(request)
        except RequestRefused as e:
            self.channel.respond_error(line.request_id, str(e), e.code)
            return
        except (ControlError, ConfigError, SessionError, KeyError) as e:
            message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            self.channel.respond_error(line.request_id, str(message))
            return
        if request.subtype == "initialize":
            self._initialized.set()
        self.channel.respond(line.request_id, payload)
