"""A workspace root and the sessions that run in it.

Front doors (LSP, ACP, CLI) create sessions here with their own Editor; the workspace
supplies settings, rules, the transcript store and the tool set. Its ``WorkspaceGuard``
keeps what settings decide about safety (rules, hooks, sandbox, trust) current for every
session.
"""

from __future__ import annotations

import logging
import stat
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tether.agents.definitions import load_definitions
from tether.core.environ import Caller
from tether.core.files import kind_of
from tether.core.hooks import Hooks
from tether.editor.port import Editor
from tether.engine.context import ContextAssembler
from tether.engine.engine import EngineConfig, QueryEngine
from tether.engine.turns import EngineEvents, PromptNotes
from tether.errors import ConfigError, SessionError, TranscriptWriteError
from tether.hooks.chain import HooksChain
from tether.hooks.command_hooks import CommandHooks
from tether.mcp.config import McpConfig
from tether.mcp.config import load_config as load_mcp_config
from tether.permissions.plan_mode import EXIT_PLAN_MODE_TOOL
from tether.permissions.policy import RuleSet
from tether.providers.base import Provider
from tether.providers.side import small_model_for
from tether.providers.windows import WindowBook
from tether.sandbox.bwrap import Probe
from tether.session.changes import ChangeSet
from tether.session.changes_resume import restore_changes
from tether.session.checkpoints import CheckpointingEditor, Checkpoints, saved_checkpoints
from tether.session.events import SessionEvents
from tether.session.file_snapshot import WorkspaceSnapshots
from tether.session.router import EditorRouter
from tether.session.session import Session, SessionHooks
from tether.session.shell_checkpoints import ShellCheckpoints
from tether.session.undo_notes import UndoNotes
from tether.settings.load import LoadedSettings, SettingSources, add_local_rule
from tether.settings.trust import TrustStore
from tether.skills.attach import attach as attach_skills
from tether.skills.registry import SkillRegistry
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState, ToolConfig
from tether.tools.registry import core_tools
from tether.tools.web_search import search_options, web_search_tool
from tether.transcript.payloads import ModeData
from tether.transcript.records import SystemRecord
from tether.transcript.resume import ResumedSession
from tether.transcript.session import open_for_resume
from tether.transcript.store import SessionInfo, TranscriptStore
from tether.transcript.writer import TranscriptWriter
from tether.workspace.guard import WorkspaceGuard, build_rules
from tether.workspace.mcp_servers import CallerServers

if TYPE_CHECKING:
    from mcp_types import CallToolResult

    from tether.mcp.connection import ServerStatus
    from tether.skills.expand import McpPrompts

from tether.workspace.from_settings import (
    compaction_settings,
    default_provider_factory,
    model_options,
    token_usage,
)
from tether.workspace.options import ProviderFactory, SessionOptions

log = logging.getLogger(__name__)


def check_folder(root: Path) -> None:
    """A session's folder must be a directory: say what it is instead (a file chosen as the
    folder would fail later, at every file tool, with a confusing error)."""
    try:
        mode = root.stat().st_mode
    except FileNotFoundError:
        raise SessionError(f"the workspace folder {root} does not exist") from None
    except OSError as e:
        raise SessionError(f"the workspace folder {root} cannot be used: {e.strerror or e}")
    if not stat.S_ISDIR(mode):
        raise SessionError(
            f"the workspace folder {root} is {kind_of(mode)}, not a directory; open the "
            "directory that holds it instead"
        )


@dataclass
class SessionCaller:
    """Whom a session works for, and its parts that depend on that (a new caller is applied
    to all of them: ``Workspace.use_caller``)."""

    caller: Caller | None
    model: str | None
    """The model spec its provider was made from (``set_model`` changes it)."""
    pinned: bool
    """The model was chosen for the session (not the settings'): settings never change it."""
    tools: ToolConfig
    hooks: CommandHooks | None


class Workspace:
    def __init__(
        self,
        root: Path,
        *,
        store: TranscriptStore | None = None,
        overrides: dict[str, Any] | None = None,
        provider_factory: ProviderFactory | None = None,
        hooks: Hooks | None = None,
        user_settings: bool = True,
        setting_sources: SettingSources | None = None,
        trust: TrustStore | None = None,
        sandbox_probe: Probe | None = None,
        watch_settings: bool = True,
        mcp_servers: Mapping[str, Any] | None = None,
        strict_mcp: bool = False,
        fallback_model: str | None = None,
        on_fallback: Callable[[str], None] | None = None,
    ) -> None:
        self.root = root.resolve()
        self._cli_mcp_servers = dict(mcp_servers or {})
        """MCP servers from the command line (``--mcp-config``): trusted like flags."""
        self._strict_mcp = strict_mcp
        """Only the command line's MCP servers; settings and ``.mcp.json`` are ignored."""
        self._fallback_model = fallback_model
        """``--fallback-model``: asked when the model is overloaded."""
        self._on_fallback = on_fallback
        self.store = store or TranscriptStore()
        self.windows = WindowBook.in_dir(self.store.root.parent)
        """Context windows servers named in refusals, per endpoint and model, kept for the
        next sessions (next to the transcripts, in the user data directory)."""
        self.guard = WorkspaceGuard(
            self.root,
            overrides,
            sources=setting_sources or SettingSources(user=user_settings),
            trust=trust,
            sandbox_probe=sandbox_probe,
            watch=watch_settings,
            data=self.store.root.parent,
        )
        self.provider_factory: ProviderFactory = provider_factory or self._provider
        self.hooks = hooks
        """Injected hooks replace the settings' command hooks (tests)."""
        self.sessions: dict[str, Session] = {}
        self.skills = SkillRegistry(self.root)
        self.snapshots = WorkspaceSnapshots(self.root)
        """The workspace's files before shell commands, for rewind (shared by its sessions)."""
        self.mcp = CallerServers(self.root, self._mcp_config, lambda: self.loaded.settings.env)
        """The MCP servers, one set per caller."""
        self._callers: dict[str, SessionCaller] = {}

    def _provider(self, model: str | None, root: Path) -> Provider:
        options = model_options(self.loaded.settings)
        return default_provider_factory(model, root, options, windows=self.windows)

    @property
    def loaded(self) -> LoadedSettings:
        return self.guard.loaded

    @property
    def warnings(self) -> list[str]:
        """Settings problems and an unavailable sandbox, for the front door to show once."""
        return self.guard.warnings

    @property
    def settings(self):
        return self.loaded.settings

    def reload_settings(self) -> None:
        self.guard.reload()

    def rules(
        self, extra_allow: list[str] | None = None, extra_deny: list[str] | None = None
    ) -> RuleSet:
        return build_rules(self.loaded.settings, extra_allow, extra_deny)

    def _engine(
        self,
        *,
        session_id: str,
        editor: Editor,
        writer: TranscriptWriter,
        options: SessionOptions,
        events: EngineEvents,
        resumed: ResumedSession | None = None,
        shell_checkpoints: Hooks | None = None,
        prompt_notes: PromptNotes | None = None,
    ) -> QueryEngine:
        settings = self.loaded.settings
        caller = options.caller
        provider = self.make_provider(options.model or settings.model, caller)
        mode = options.mode or (resumed.mode if resumed else None) or options.default_mode
        state = SessionRunState(mode=mode or settings.permissions.default_mode)
        if resumed is not None:
            state.todos = resumed.todos
            state.files.restore(resumed.files)
        # Commands run with the client's whole environment and umask, not the daemon's
        # (model keys stay out, as this process's do: ``shell_env``); ``~`` is its home.
        tool_config = self.guard.configure_tools(ToolConfig(caller_env=options.caller))
        tool_config.small_model = small_model_for(provider, options.caller)
        command_hooks: CommandHooks | None = None
        if self.hooks is None:
            command_hooks = self.guard.session_hooks(
                session_id,
                editor,
                state,
                writer.path,
                resumed=resumed is not None,
                caller_env=options.caller,
            )
        sources = [h for h in (self.hooks or command_hooks, shell_checkpoints, options.hooks) if h]
        hooks = sources[0] if len(sources) == 1 else HooksChain(sources) if sources else None
        builtin = [*core_tools(), EXIT_PLAN_MODE_TOOL]
        if options.builtin_tools is not None:
            wanted = set(options.builtin_tools)
            builtin = [t for t in builtin if t.name in wanted]
        allow, deny = list(options.allow), list(options.deny)
        engine = QueryEngine(
            session_id=session_id,
            cwd=self.root,
            provider=provider,
            provider_for=lambda model: self.make_provider(model, self._caller(session_id, caller)),
            tools=[*builtin, *options.tools],
            editor=editor,
            rules=self.rules(allow, deny),
            hooks=hooks,
            config=EngineConfig(
                max_turns=options.max_turns
                if options.max_turns is not None
                else settings.max_turns,
                max_budget_usd=options.max_budget_usd
                if options.max_budget_usd is not None
                else settings.max_budget_usd,
                compaction=compaction_settings(settings.context),
            ),
            tool_config=tool_config,
            state=state,
            history=resumed.messages if resumed else None,
            transcript=writer,
            assembler=ContextAssembler(
                cwd=self.root,
                model=provider.model,
                custom=options.system_prompt,
                extra_sections=[options.append_system_prompt]
                if options.append_system_prompt
                else [],
                caller=caller,
            ),
            tasks=TaskRegistry(writer.path.parent / session_id / "tasks"),
            title=options.title or (resumed.title if resumed else None),
            remember_rule=self._persist_rule,
            events=events,
            attachment_sources=options.attachments,
            agent_definitions={**load_definitions(self.root), **options.agents}
            if options.agents
            else None,
            refresh_settings=self.guard.refresh,
            prompt_notes=prompt_notes,
        )
        if resumed is not None:
            engine.turns = resumed.turns
            engine.meter.session = resumed.usage
            engine.tools.discovered.update(resumed.discovered_tools)
            if resumed.context_anchor is not None:
                covered, usage = resumed.context_anchor
                engine.compactor.anchor(engine.messages, covered, token_usage(usage))

        def follow(model: str | None) -> None:
            self._follow_settings(session_id, model)

        pinned = options.model is not None
        self.guard.attach(
            engine, tool_config, command_hooks, allow, deny, None if pinned else follow
        )
        rules = engine.rules
        if options.builtin_tools is None or "WebSearch" in options.builtin_tools:
            engine.tools.add(web_search_tool(lambda: search_options(lambda: rules.deny)))
        attach_skills(engine, self.skills)
        self.mcp.attach(engine, options.caller)
        self._callers[session_id] = SessionCaller(
            options.caller,
            options.model or settings.model,
            pinned,
            tool_config,
            command_hooks,
        )
        sandbox = self.guard.sandbox
        if settings.sandbox.enabled and not sandbox.active:
            engine.note(sandbox.describe())
        return engine

    def _caller(self, session_id: str, first: Caller | None) -> Caller | None:
        """Whom the session works for now (its owner may have sent a new environment)."""
        parts = self._callers.get(session_id)
        return parts.caller if parts is not None else first

    def make_provider(self, model: str | None, env: Mapping[str, str] | None = None) -> Provider:
        """The provider for ``model``, backed by the fallback model when there is one;
        ``env``: the variables of the client the session belongs to (None: this process's)."""
        main = self._new_provider(model, env)
        if self._fallback_model is None:
            return main
        from tether.providers.fallback import FallbackProvider

        spare = self._new_provider(self._fallback_model, env)
        return FallbackProvider(main, spare, on_fallback=self._on_fallback)

    def _new_provider(self, model: str | None, env: Mapping[str, str] | None) -> Provider:
        if env is None or self.provider_factory != self._provider:
            return self.provider_factory(model, self.root)  # an injected factory knows best
        options = model_options(self.loaded.settings)
        return default_provider_factory(model, self.root, options, env, self.windows)

    async def set_cli_mcp_servers(
        self, servers: Mapping[str, Any], engine: QueryEngine, caller: Caller | None
    ) -> dict[str, str]:
        """Replace the command line's MCP servers while ``engine``'s session runs (an SDK
        program's ``mcp_set_servers``); returns, by name, those that could not start."""
        self._cli_mcp_servers = dict(servers)
        return await self.mcp.replace(engine, caller, set(servers))

    async def restart_mcp(self, name: str, caller: Caller | None = None) -> None:
        """Start one MCP server again; ``KeyError`` names the servers there are."""
        await self.mcp.restart(name, caller)

    def _mcp_config(self, caller: Caller | None) -> McpConfig:
        """The MCP servers as ``caller`` sees them (``${VAR}`` is its variable). The
        project's ``.mcp.json`` counts only in a trusted workspace."""
        servers = {} if self._strict_mcp else dict(self.loaded.settings.mcp_servers)
        return load_mcp_config(
            self.root,
            {**servers, **self._cli_mcp_servers},
            project_file=self.guard.trusted and not self._strict_mcp,
            env=caller,
        )

    def mcp_prompts(self, env: Caller | None = None) -> McpPrompts | None:
        """The MCP servers' prompts and resources, for prompt expansion (None without MCP);
        ``env``: the caller whose servers (None: this process's)."""
        return self.mcp.prompts(env)

    async def ready(self, timeout: float = 10.0, env: Caller | None = None) -> list[str]:
        """Wait (bounded) for MCP servers to settle before a session's first request, so
        their tools are there; returns problems worth showing the user."""
        return await self.mcp.ready(env, timeout)

    async def call_mcp_tool(
        self, name: str, arguments: dict[str, Any], env: Caller | None = None
    ) -> CallToolResult:
        """Call one of the workspace's MCP tools by its ``mcp__server__tool`` name (the
        command line's ``--permission-prompt-tool`` asks one); raises ``SessionError``
        when no server offers it."""
        return await self.mcp.call_tool(name, arguments, env)

    def mcp_statuses(self, env: Caller | None = None) -> list[ServerStatus]:
        """The workspace's MCP servers and how they are doing (empty until a session
        started them)."""
        return self.mcp.statuses(env)

    async def use_caller(self, session_id: str, caller: Caller | None) -> None:
        """The session works for ``caller`` from now on (its owner sent a new environment):
        its model client, commands, hooks and MCP servers take it from their next use."""
        parts = self._callers.get(session_id)
        session = self.sessions.get(session_id)
        if parts is None or session is None or parts.caller == caller:
            return
        parts.caller = caller
        engine = session.engine
        engine.set_provider(self.make_provider(parts.model, caller))
        parts.tools.caller_env = caller
        self.guard.configure_tools(parts.tools)  # ``~`` in the settings: the new caller's
        engine.assembler.caller = caller  # its shell, named in the system prompt
        engine.assembler.invalidate()
        parts.tools.small_model = small_model_for(engine.provider, caller)
        if parts.hooks is not None:
            parts.hooks.use_caller(caller)
        await self.mcp.release(session_id)
        self.mcp.attach(engine, caller)

    def _follow_settings(self, session_id: str, model: str | None) -> None:
        """The settings' model changed (the folder was trusted): a session on the settings'
        model switches to it; one whose model was chosen for it stays."""
        parts, session = self._callers.get(session_id), self.sessions.get(session_id)
        if parts is None or session is None or parts.pinned:
            return
        try:
            provider = self.make_provider(model, parts.caller)
        except ConfigError as e:
            log.warning("the settings' model %s cannot be used: %s", model, e)
            return
        session.engine.set_provider(provider)
        parts.model = model
        parts.tools.small_model = small_model_for(provider, parts.caller)

    def _persist_rule(self, kind: Literal["allow", "deny"], rule: str) -> None:
        try:
            add_local_rule(self.root, kind, rule)
        except OSError as e:
            log.warning("could not save the rule %s: %s", rule, e)

    def new_session(self, editor: Editor, options: SessionOptions | None = None) -> Session:
        """A new conversation in this workspace; ``editor`` is the front door's."""
        options = options or SessionOptions()
        session_id = options.session_id or str(uuid.uuid4())
        if self.store.find(session_id) is not None:
            raise SessionError(f"a session with ID {session_id} exists already")
        check_folder(self.root)
        writer = TranscriptWriter(self.store.session_path(self.root, session_id), session_id)
        try:
            writer.open()
        except OSError as e:
            raise TranscriptWriteError(
                f"cannot create the session file {writer.path}: {e.strerror or e}. Make "
                f"{self.store.root} a writable directory, or set TETHER_DATA_DIR to one."
            ) from None
        try:
            return self._session(session_id, editor, writer, options, None)
        except BaseException:
            # A session that could not start (a bad model, say) leaves no empty file behind.
            writer.release()
            writer.path.unlink(missing_ok=True)
            raise

    async def load_session(
        self,
        session_id: str,
        editor: Editor,
        options: SessionOptions | None = None,
        *,
        recover: bool = False,
    ) -> Session:
        """An earlier conversation, resumed from its transcript."""
        if session_id in self.sessions:
            raise SessionError(f"session {session_id} is already open")
        check_folder(self.root)
        path = self.store.find(session_id)
        if path is None:
            raise SessionError(f"No conversation found with session ID: {session_id}")
        resumed, writer = await open_for_resume(path, session_id, recover=recover)
        try:
            return self._session(session_id, editor, writer, options or SessionOptions(), resumed)
        except BaseException:
            writer.abandon()  # a session that could not start keeps nothing locked
            raise

    def _session(
        self,
        session_id: str,
        editor: Editor,
        writer: TranscriptWriter,
        options: SessionOptions,
        resumed: ResumedSession | None,
    ) -> Session:
        checkpoints = saved_checkpoints(resumed) if resumed is not None else Checkpoints()
        router = EditorRouter(editor)
        checkpointing = CheckpointingEditor(router, checkpoints, session_id, writer.append)
        events = SessionEvents()
        # Rewind covers what shell commands change too, not only the editor's writes.
        shell = ShellCheckpoints(self.snapshots, checkpoints, session_id, writer.append)
        changes = ChangeSet(
            checkpoints, session_id, writer.append, lambda update: events.publish("", update)
        )
        if resumed is not None:
            restore_changes(changes, resumed)
        engine = self._engine(
            session_id=session_id,
            editor=checkpointing,
            writer=writer,
            options=options,
            events=events,
            resumed=resumed,
            shell_checkpoints=shell,
            prompt_notes=UndoNotes(changes, router, self.root).take,
        )

        caller = self._callers[session_id]

        async def close() -> None:
            await self.close_session(session_id)

        def model_set(model: str) -> None:
            caller.model, caller.pinned = model, True

        session = Session(
            engine=engine,
            editor=checkpointing,
            router=router,
            checkpoints=checkpoints,
            changes=changes,
            events=events,
            hooks=SessionHooks(
                ready=lambda: self.ready(env=caller.caller),
                provider_for=lambda model: self.make_provider(model, caller.caller),
                close=close,
                mcp_prompts=lambda: self.mcp_prompts(caller.caller),
                use_caller=lambda new: self.use_caller(session_id, new),
                model_set=model_set,
            ),
            auto_wake=options.auto_wake,
            repaired=resumed.repaired if resumed is not None else (),
        )
        if resumed is None:
            # The mode a session starts in is on record like every later change.
            engine.record(
                SystemRecord(session_id=session_id, data=ModeData(mode=engine.state.mode))
            )
        self.sessions[session_id] = session
        return session

    def list_sessions(self, limit: int | None = None) -> list[SessionInfo]:
        return self.store.list_sessions(self.root, limit)

    async def close_session(self, session_id: str) -> None:
        """Release what the workspace holds for a session (``Session.close`` calls this)."""
        session = self.sessions.pop(session_id, None)
        self._callers.pop(session_id, None)
        await self.mcp.release(session_id)
        if session is not None:
            await session.engine.close()
            await self.guard.detach(session_id)

    async def close(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        await self.mcp.close()
        self.guard.close()
