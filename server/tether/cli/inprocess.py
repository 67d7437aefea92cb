"""``InProcessDriver``: the session runs in this process, on the session core.

It assembles a ``Workspace`` with the command line's settings and MCP servers, opens or
resumes a ``Session`` with a ``DiskEditor`` whose questions go to the caller's asker, and
maps the driver calls one to one onto the session's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tether.cli.callenv import daemon_share
from tether.cli.driver import (
    CheckedCall,
    HostedServer,
    McpServerState,
    OpenRequest,
    SessionFacts,
    TurnOutcome,
    UpdateListener,
)
from tether.cli.logs import say
from tether.core.environ import Caller
from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionReply, PermissionRequest
from tether.engine.turns import TurnResult
from tether.errors import ConfigError, SessionError
from tether.protocol.content import ContentBlock
from tether.protocol.updates import Mode
from tether.providers.base import Provider
from tether.providers.choice import choose_model
from tether.providers.registry import ModelSpec, parse_model_spec
from tether.providers.scripted import ScriptedProvider
from tether.session.session import Session
from tether.settings.load import ALL_SOURCES, SettingSources, origin_of
from tether.settings.trust import model_waits_for_trust, withheld_model
from tether.skills import commands
from tether.tools.base import Tool
from tether.transcript.store import TranscriptStore, data_dir
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions

if TYPE_CHECKING:
    import mcp_types

_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


async def _refuse(request: PermissionRequest) -> PermissionReply:
    return request.reply("reject_once")


def check_credentials(
    spec: ModelSpec, settings_helper: str | None, env: Mapping[str, str] | None = None
) -> None:
    """An Anthropic model without any way to authenticate is refused before anything
    starts, naming what to set."""
    if spec.provider != "anthropic" or settings_helper:
        return
    environ = os.environ if env is None else env
    if not any(environ.get(v) for v in _KEY_VARIABLES):
        gateway = environ.get("ANTHROPIC_BASE_URL")
        if gateway:  # as Claude Code: a gateway's URL does not authenticate by itself
            raise ConfigError(
                f"no API key for {spec.model} at ANTHROPIC_BASE_URL {gateway}: set "
                "ANTHROPIC_AUTH_TOKEN (or ANTHROPIC_API_KEY) to the key the gateway wants, "
                "any value if it wants none"
            )
        raise ConfigError(
            f"no API key for {spec.model}: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
            "or choose a local model with --model ollama:<model> (or openai:<model>@<base-url>)"
        )


ProviderFactory = Callable[[str | None, Path], Provider]
OnOpen = Callable[[SessionFacts], None]


class InProcessDriver:
    def __init__(
        self,
        *,
        setting_sources: SettingSources = ALL_SOURCES,
        provider_factory: ProviderFactory | None = None,
        env: Caller | None = None,
        on_open: OnOpen | None = None,
    ) -> None:
        """``env``: the caller the session works for (the warm daemon runs print mode for
        callers other than itself): its providers and processes get its environment and
        umask; None: this process's.
        ``on_open`` hears of the session once it is open (the daemon tells its client the
        session id, to name it if the daemon dies mid-turn)."""
        self._setting_sources = setting_sources
        self._custom_factory = provider_factory
        self._env = env
        self._on_open = on_open
        self._workspace: Workspace | None = None
        self._session: Session | None = None
        self._request: OpenRequest | None = None
        self._notes: list[str] = []
        self._endpoint: str | None = None
        self._endpoint_origin: str | None = None
        self._unshare: Callable[[], None] | None = None
        self._hosted: Sequence[HostedServer] = ()
        self._hosted_tools: set[str] = set()
        """Unlists the session from the warm daemon's shared ones (print mode there)."""

    # -- opening ------------------------------------------------------------------------

    async def open(self, request: OpenRequest) -> SessionFacts:
        root = request.cwd.resolve()
        if not root.is_dir():
            raise ConfigError(f"the working directory {root} is not a directory")
        workspace = Workspace(
            root,
            overrides=dict(request.settings) or None,
            setting_sources=self._setting_sources,
            mcp_servers=request.mcp_servers,
            strict_mcp=request.strict_mcp,
            fallback_model=request.fallback_model,
            on_fallback=_say_fallback,
            provider_factory=self._custom_factory,
            # The caller's TETHER_DATA_DIR: its transcripts where its in-process runs keep them.
            store=TranscriptStore(data_dir(self._env)) if self._env is not None else None,
        )
        try:
            notes: list[str] = []
            waiting = None if request.model else withheld_model(workspace.loaded.withheld)
            if waiting is not None and request.trust is not None:
                # The project's model waits for trust: the question comes before the model
                # is chosen, so that a yes runs this very call on it.
                await workspace.guard.settle_trust(request.trust)
                waiting = withheld_model(workspace.loaded.withheld)
            settings = workspace.loaded.settings
            if self._custom_factory is None:
                env = self._env
                chosen_by = "--model" if request.model else origin_of(workspace.loaded, "model")
                try:
                    choice = choose_model(
                        request.model or settings.model, chosen_by, cwd=root, env=env
                    )
                except ConfigError as e:
                    raise (ConfigError(model_waits_for_trust(waiting)) if waiting else e) from e
                if waiting is not None:
                    notes.append(
                        f"{model_waits_for_trust(waiting)}; this call uses {choice.spec.model} "
                        f"(chosen by {choice.chosen_by})"
                    )
                if request.fallback_model:
                    parse_model_spec(request.fallback_model, cwd=root, env=env)
                check_credentials(choice.spec, settings.api_key_helper, env)
                self._endpoint = choice.endpoint
                self._endpoint_origin = choice.endpoint_chosen_by
            self._notes = [*workspace.warnings, *notes]
            self._session = await self._start(workspace, request)
        except BaseException:
            await workspace.close()
            raise
        self._workspace, self._request = workspace, request
        self._hosted = request.hosted
        self._hosted_tools = {t.name for t in _wrapped(request.hosted)}
        share = daemon_share()
        if share is not None:
            # In the warm daemon: other clients may follow this session and cancel its turns.
            self._unshare = share(self._session)
        self._notes += [f"resume: {note}" for note in self._session.repaired]
        facts = self.facts()
        if self._on_open is not None:
            self._on_open(facts)
        return facts

    async def _start(self, workspace: Workspace, request: OpenRequest) -> Session:
        ask = request.ask or _refuse
        editor = DiskEditor(ask, request.trust)
        deny = list(request.deny)
        if request.builtin_tools is not None and "Agent" not in request.builtin_tools:
            # The engine adds Agent itself; a bare deny rule takes it out of the model's view.
            deny.append("Agent")
        options = SessionOptions(
            session_id=request.session_id,
            model=request.model,
            mode=request.mode,
            allow=request.allow,
            deny=deny,
            max_turns=request.max_turns,
            max_budget_usd=request.max_budget_usd,
            auto_wake=False,
            hooks=request.hooks,
            tools=_wrapped(request.hosted),
            builtin_tools=request.builtin_tools,
            system_prompt=request.system_prompt,
            append_system_prompt=request.append_system_prompt,
            agents=request.agents,
            caller=self._env,
        )
        resume = request.resume
        if request.continue_latest:
            latest = workspace.list_sessions(1)
            if not latest:
                raise SessionError(f"No conversation found to continue in {workspace.root}")
            resume = latest[0].session_id
        if resume and request.fork:
            resume = _fork(workspace, resume, request.session_id)
        if resume:
            return await workspace.load_session(resume, editor, options, recover=request.recover)
        return workspace.new_session(editor, options)

    def _live(self) -> tuple[Workspace, Session]:
        if self._workspace is None or self._session is None:
            raise SessionError("no session is open")
        return self._workspace, self._session

    def facts(self) -> SessionFacts:
        workspace, session = self._live()
        servers = [
            McpServerState(s.name, s.state, s.error) for s in workspace.mcp_statuses(self._env)
        ]
        servers += [McpServerState(h.name, "connected") for h in self._hosted]
        return SessionFacts(
            session_id=session.session_id,
            cwd=session.cwd,
            model=session.model,
            mode=session.mode,
            tools=[s.name for s in session.engine.tool_specs()],
            mcp_servers=servers,
            slash_commands=[c.name for c in commands.discover(session.cwd)],
            notes=list(self._notes),
            endpoint=self._endpoint,
            endpoint_origin=self._endpoint_origin,
            transcript_path=str(writer.path) if (writer := session.engine.transcript) else None,
        )

    # -- driving --------------------------------------------------------------------------

    def subscribe(self, listener: UpdateListener) -> Callable[[], None]:
        return self._live()[1].events.subscribe(listener)

    async def ready(self) -> None:
        workspace, _ = self._live()
        for problem in await workspace.ready(env=self._env):
            say(problem, error=True)

    async def prompt(self, blocks: Sequence[ContentBlock]) -> TurnOutcome:
        await self.ready()
        return _outcome(await self._live()[1].prompt(blocks))

    async def fold(self, blocks: Sequence[ContentBlock]) -> TurnOutcome | None:
        result = await self._live()[1].fold(blocks)
        return _outcome(result) if result is not None else None

    def interrupt(self) -> bool:
        return self._live()[1].cancel()

    async def set_mode(self, mode: Mode) -> None:
        self._live()[1].set_mode(mode)

    async def set_model(self, model: str | None) -> str:
        workspace, session = self._live()
        settings = workspace.loaded.settings
        chosen_by = "the model the program set" if model else "the model setting"
        choice = choose_model(model or settings.model, chosen_by, cwd=session.cwd, env=self._env)
        check_credentials(choice.spec, settings.api_key_helper, self._env)
        session.set_model(model or settings.model or choice.spec.model)
        self._endpoint = choice.endpoint
        self._endpoint_origin = choice.endpoint_chosen_by
        return session.model

    async def stop_task(self, task_id: str) -> bool:
        return await self._live()[1].stop_task(task_id)

    async def call_checked(self, name: str, arguments: dict[str, Any]) -> CheckedCall:
        import mcp_types as types  # MCP's SDK loads only when MCP is used

        from tether.core.messages import ImageBlock, TextBlock, ToolUseBlock
        from tether.orchestration.pipeline import run_tool_use

        engine = self._live()[1].engine
        if engine.tools.get(name) is None:
            return CheckedCall(None, f"The tool did not run: no tool named {name} in the session")
        use = ToolUseBlock(id=f"mcp_call_{uuid.uuid4().hex[:12]}", name=name, input=arguments)
        outcome = await run_tool_use(use, engine.tool_runtime)
        if outcome.rejected is not None:
            return CheckedCall(None, f"The tool did not run: {outcome.block.text}")
        content: list[types.TextContent | types.ImageContent] = [
            types.TextContent(type="text", text=b.text)
            if isinstance(b, TextBlock)
            else types.ImageContent(type="image", data=b.data, mime_type=b.media_type)
            for b in outcome.block.content
            if isinstance(b, TextBlock | ImageBlock)
        ]
        return CheckedCall(types.CallToolResult(content=list(content), is_error=outcome.failed))

    async def call_mcp_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        from tether.mcp.tools import mcp_tool_name  # MCP's SDK loads only when MCP is used

        for server in self._hosted:
            for tool in server.tools:
                if mcp_tool_name(server.name, tool.name) == name:
                    return await server.call_tool(tool.name, arguments)
        return await self._live()[0].call_mcp_tool(name, arguments, self._env)

    def set_hosted(
        self, servers: Sequence[HostedServer], *, ask: Sequence[str] = (), deny: Sequence[str] = ()
    ) -> None:
        engine = self._live()[1].engine
        self.add_rules("ask", ask, persist=False)
        self.add_rules("deny", deny, persist=False)
        tools = _wrapped(servers)
        for gone in self._hosted_tools - {t.name for t in tools}:
            engine.tools.remove(gone)
        for tool in tools:
            if engine.rules.removes_tool(tool.name):
                engine.tools.remove(tool.name)
            else:
                engine.tools.add(tool)
        self._hosted, self._hosted_tools = servers, {t.name for t in tools}

    def add_rules(self, behavior: str, rules: Sequence[str], *, persist: bool) -> None:
        workspace, session = self._live()
        if behavior not in ("allow", "deny", "ask"):
            return
        kind: Literal["allow", "ask", "deny"] = behavior  # pyright: ignore[reportAssignmentType]
        if persist and kind != "ask":
            for text in rules:
                session.engine.tooling.remember_rule(kind, text)  # saved: a reload keeps it
            return
        workspace.guard.add_session_rules(session.session_id, kind, list(rules))

    async def set_mcp_servers(self, servers: Mapping[str, Any]) -> dict[str, str]:
        workspace, session = self._live()
        return await workspace.set_cli_mcp_servers(servers, session.engine, self._env)

    async def restart_mcp(self, name: str) -> None:
        await self._live()[0].restart_mcp(name, self._env)

    async def background_pending(self, waiting: Callable[[int], None]) -> bool:
        session = self._live()[1]
        tasks = session.engine.tasks
        while not session.engine.notifications:
            running = tasks.running()
            if not running:
                return False
            waiting(len(running))
            await tasks.wait_any()
            await asyncio.sleep(0)  # let the finished task's notification be queued
        return True

    async def answer_background(self) -> TurnOutcome | None:
        result = await self._live()[1].answer_notifications()
        return _outcome(result) if result is not None else None

    async def close(self) -> list[str]:
        workspace, session = self._workspace, self._session
        self._workspace = self._session = None
        if self._unshare is not None:
            self._unshare()
            self._unshare = None
        if workspace is None:
            return []
        provider = session.engine.provider if session is not None else None
        await workspace.close()
        if isinstance(provider, ScriptedProvider) and provider.remaining:
            return [f"the script has {provider.remaining} unconsumed turn(s)"]
        return []


def _fork(workspace: Workspace, session_id: str, new_id: str | None) -> str:
    """A copy of the session's transcript under a new id (``--fork-session``): resuming the
    copy leaves the original as it was."""
    source = workspace.store.find(session_id)
    if source is None:
        raise SessionError(f"No conversation found with session ID: {session_id}")
    fork_id = new_id or str(uuid.uuid4())
    target = workspace.store.session_path(workspace.root, fork_id)
    if target.exists():
        raise SessionError(f"a session with ID {fork_id} exists already")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    target.chmod(0o600)
    return fork_id


def _say_fallback(reason: str) -> None:
    say(reason, error=True)


def _wrapped(servers: Sequence[HostedServer]) -> list[Tool[Any]]:
    if not servers:
        return []
    from tether.mcp.tools import wrap_tool  # MCP's SDK loads only when MCP is used

    return [wrap_tool(h.name, t, h.call_tool) for h in servers for t in h.tools]


def _outcome(result: TurnResult) -> TurnOutcome:
    terminal = result.terminal
    return TurnOutcome(
        stop_reason=terminal.stop_reason,
        reason=terminal.reason,
        error=(terminal.message or terminal.reason) if terminal.reason != "completed" else None,
        usage=result.usage,
    )
