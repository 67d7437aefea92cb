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
import os
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from tether import __version__
from tether.agents.definitions import AgentDefinition
from tether.cli.control import (
    ControlChannel,
    ControlError,
    HookMatcherConfig,
    IncomingRequest,
    InitializeRequest,
    InterruptRequest,
    McpStatusRequest,
    SetModelRequest,
    SetPermissionModeRequest,
    parse_request,
)
from tether.cli.driver import HostedServer, PermissionAsker, SessionDriver, TurnOutcome
from tether.cli.flags import STDIO_PROMPT_TOOL, PrintOptions
from tether.cli.permission_tool import answer_reply, mcp_permission_asker
from tether.cli.render import Write
from tether.cli.run import exit_code, open_request
from tether.cli.sdk_hooks import SdkHooks
from tether.cli.stream_input import (
    ControlCancelLine,
    ControlRequestLine,
    ControlResponseLine,
    InputError,
    UserLine,
    parse_line,
)
from tether.cli.stream_json import StreamJsonEncoder
from tether.editor.port import PermissionReply, PermissionRequest
from tether.errors import ConfigError, SessionError
from tether.protocol.updates import MODES, Mode, Usage
from tether.providers.registry import MODEL_ALIASES, parse_model_spec
from tether.skills import commands

STATE_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"


async def stdin_lines() -> AsyncIterator[str]:
    """Lines of stdin as they arrive (a thread reads, so nothing blocks the loop and any
    kind of stdin works: pipe, file, terminal)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def put(item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the run is over and its loop closed
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def read() -> None:
        try:
            binary = getattr(sys.stdin, "buffer", None)
            if binary is None:  # a text stream standing in for stdin
                for text in sys.stdin:
                    put(text)
                return
            for raw in binary:
                put(raw.decode("utf-8", "replace"))
        finally:
            # Whatever happened to stdin, the run learns that no more input comes.
            put(None)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line


def sdk_server_names(servers: Mapping[str, Any]) -> list[str]:
    """The ``--mcp-config`` entries the program hosts itself (``"type": "sdk"``)."""
    return [
        name
        for name, config in servers.items()
        if isinstance(config, Mapping) and cast(Mapping[str, Any], config).get("type") == "sdk"
    ]


def _suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    rule = request.always_rule
    if rule is None:
        return []
    tool, _, rest = rule.partition("(")
    content = rest[:-1] if rest.endswith(")") else None
    entry: dict[str, Any] = {"toolName": tool}
    if content:
        entry["ruleContent"] = content
    return [
        {"type": "addRules", "rules": [entry], "behavior": "allow", "destination": "localSettings"}
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
        self._lines = lines
        self._prompts: asyncio.Queue[UserLine | None] = asyncio.Queue()
        self._hooks: dict[str, list[HookMatcherConfig]] = {}
        self._agents: dict[str, AgentDefinition] = {}
        self._open = False
        self._mode: Mode | None = options.mode
        self._model: str | None = options.model
        self._states = os.environ.get(STATE_ENV) == "1"
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
        options = self.options
        hosted_names = sdk_server_names(options.mcp_servers)
        hosted: list[HostedServer] = []
        if hosted_names:
            from tether.cli.sdk_mcp import HostedMcpClient  # MCP's SDK loads only when used

            for name in hosted_names:
                hosted.append(await HostedMcpClient(name, self.channel).connect())
        external = {k: v for k, v in options.mcp_servers.items() if k not in hosted_names}
        hooks = None
        if self._hooks:
            sdk_hooks = SdkHooks(
                self.channel,
                self._hooks,
                session_id=lambda: self.driver.facts().session_id,
                cwd=options.cwd,
                mode=lambda: self.driver.facts().mode,
                transcript_path=lambda: self.driver.facts().transcript_path or "",
                source="startup" if self._session_id is not None else "resume",
            )
            for event in sdk_hooks.unsupported:
                sys.stderr.write(
                    f"[tether] SDK hooks for {event} never fire: Tether has no such event\n"
                )
            hooks = sdk_hooks
        request = replace(
            open_request(options, self._asker(), None),
            session_id=self._session_id,
            mode=self._mode,
            model=self._model,
            mcp_servers=external,
            hooks=hooks,
            hosted=hosted,
            agents=self._agents,
        )
        facts = await self.driver.open(request)
        self._open = True
        self.driver.subscribe(lambda _turn, update: self.encoder.update(update))
        for note in facts.notes:
            sys.stderr.write(f"[tether] {note}\n")

    def _asker(self) -> PermissionAsker | None:
        tool = self.options.permission_prompt_tool
        if tool == STDIO_PROMPT_TOOL:
            return self._can_use_tool
        if tool is not None:
            return mcp_permission_asker(tool, self.driver)
        return None

    async def _can_use_tool(self, request: PermissionRequest) -> PermissionReply:
        plan = request.kind == "plan"
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": "ExitPlanMode" if plan else request.tool_name,
            "display_name": request.tool_name,
            "input": {"plan": request.plan} if plan else request.raw_input,
            "description": request.title,
            "permission_suggestions": _suggestions(request),
            "blocked_path": None,
            "tool_use_id": request.tool_call_id,
        }
        self._state("requires_action")
        try:
            answer = await self.channel.request(body)
        except ControlError as e:
            sys.stderr.write(f"[tether] {request.tool_name} denied: {e}\n")
            return request.reply("plan_keep" if plan else "reject_once")
        finally:
            self._state("running")
        if answer.get("behavior") == "deny" and answer.get("interrupt"):
            # The program wants the whole turn stopped, not only this call refused.
            asyncio.get_running_loop().call_soon(self.driver.interrupt)
        return answer_reply(request, answer, "the SDK's can_use_tool")

    # -- control requests --------------------------------------------------------------------

    async def _answer(self, line: ControlRequestLine) -> None:
        try:
            request = parse_request(line.request)
            payload = await self._handle(request)
        except (ControlError, ConfigError, SessionError) as e:
            self.channel.respond_error(line.request_id, str(e))
            return
        self.channel.respond(line.request_id, payload)

    async def _handle(self, request: IncomingRequest) -> dict[str, Any]:
        if isinstance(request, InitializeRequest):
            return self._initialize(request)
        if isinstance(request, InterruptRequest):
            if self._open:
                self.driver.interrupt()
            return {}
        if isinstance(request, SetPermissionModeRequest):
            return await self._set_mode(request.mode)
        if isinstance(request, SetModelRequest):
            return await self._set_model(request.model)
        if isinstance(request, McpStatusRequest):
            servers = self.driver.facts().mcp_servers if self._open else []
            return {"mcpServers": [{"name": s.name, "status": s.status} for s in servers]}
        if not self._open or not await self.driver.stop_task(request.task_id):
            raise ControlError(f"no running task {request.task_id}")
        return {}

    def _initialize(self, request: InitializeRequest) -> dict[str, Any]:
        if self._open:
            raise ControlError("initialize came after the session started")
        self._hooks = dict(request.hooks or {})
        self._agents = {
            name: AgentDefinition(
                name=name,
                description=agent.description,
                prompt=agent.prompt,
                tools=tuple(agent.tools) if agent.tools is not None else None,
                model=None if agent.model in (None, "inherit") else agent.model,
            )
            for name, agent in (request.agents or {}).items()
        }
        found = commands.discover(self.options.cwd)
        return {
            "commands": [
                {"name": c.name, "description": c.description, "argumentHint": c.hint or ""}
                for c in found
            ],
            "agents": [{"name": n, "description": a.description} for n, a in self._agents.items()],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [
                {"value": alias, "resolvedModel": model, "displayName": alias.title()}
                for alias, (model, _variable) in MODEL_ALIASES.items()
            ],
            "pid": os.getpid(),
            "tether_version": __version__,
            "current_permission_mode": self._mode or "default",
            "hooks_applied": True,
            "hook_on_failure_supported": True,
        }

    async def _set_mode(self, mode: str) -> dict[str, Any]:
        if mode not in MODES:
            raise ControlError(f"unknown permission mode {mode!r} (one of {', '.join(MODES)})")
        chosen: Mode = mode  # pyright: ignore[reportAssignmentType]
        self._mode = chosen
        if self._open:
            await self.driver.set_mode(chosen)  # its mode update writes system/status
        else:
            self.encoder.status(chosen)
        return {"mode": chosen}

    async def _set_model(self, model: str | None) -> dict[str, Any]:
        if self._open:
            if model is None:
                raise ControlError("set_model needs a model once the session has started")
            return {"model": await self.driver.set_model(model)}
        if model is not None:
            spec = parse_model_spec(model, cwd=self.options.cwd)  # a bad name fails here
            self._model = model
            return {"model": spec.model}
        self._model = self.options.model
        return {"model": self.options.model or "default"}
