"""A workspace root and the sessions that run in it.

Front doors (LSP, ACP, CLI) create sessions here with their own Editor; the workspace
supplies settings, rules, the transcript store and the tool set. Its ``WorkspaceGuard``
keeps what settings decide about safety (rules, hooks, sandbox, trust) current for every
session.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from tether.editor.port import Editor
from tether.engine.context import ContextAssembler
from tether.engine.engine import EngineConfig, QueryEngine
from tether.engine.hooks import Hooks
from tether.errors import SessionError
from tether.hooks.command_hooks import CommandHooks
from tether.permissions.plan_mode import EXIT_PLAN_MODE_TOOL
from tether.permissions.policy import RuleSet
from tether.permissions.workspace_guard import WorkspaceGuard, build_rules
from tether.protocol.updates import Mode
from tether.providers.base import Provider
from tether.providers.registry import create_provider, parse_model_spec
from tether.sandbox.bwrap import Probe
from tether.settings.load import LoadedSettings, add_local_rule
from tether.settings.trust import TrustStore
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState, ToolConfig
from tether.tools.registry import core_tools
from tether.transcript.resume import ResumedSession
from tether.transcript.session import open_for_resume
from tether.transcript.store import SessionInfo, TranscriptStore
from tether.transcript.writer import TranscriptWriter

log = logging.getLogger(__name__)

ProviderFactory = Callable[[str | None, Path], Provider]


def default_provider_factory(model: str | None, root: Path) -> Provider:
    return create_provider(parse_model_spec(model, cwd=root))


class Workspace:
    def __init__(
        self,
        root: Path,
        *,
        store: TranscriptStore | None = None,
        overrides: dict[str, Any] | None = None,
        provider_factory: ProviderFactory = default_provider_factory,
        hooks: Hooks | None = None,
        user_settings: bool = True,
        trust: TrustStore | None = None,
        sandbox_probe: Probe | None = None,
        watch_settings: bool = True,
    ) -> None:
        self.root = root.resolve()
        self.store = store or TranscriptStore()
        self.guard = WorkspaceGuard(
            self.root,
            overrides,
            user=user_settings,
            trust=trust,
            sandbox_probe=sandbox_probe,
            watch=watch_settings,
        )
        self.provider_factory = provider_factory
        self.hooks = hooks
        """Injected hooks replace the settings' command hooks (tests)."""
        self.sessions: dict[str, QueryEngine] = {}

    @property
    def loaded(self) -> LoadedSettings:
        return self.guard.loaded

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
        model: str | None,
        mode: Mode | None,
        writer: TranscriptWriter,
        resumed: ResumedSession | None = None,
        extra_allow: list[str] | None = None,
        extra_deny: list[str] | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
        title: str | None = None,
    ) -> QueryEngine:
        settings = self.loaded.settings
        provider = self.provider_factory(model or settings.model, self.root)
        state = SessionRunState(mode=mode or settings.permissions.default_mode)
        if resumed is not None:
            state.mode = mode or resumed.mode or state.mode
            state.todos = resumed.todos
            state.files.restore(resumed.files)
        tool_config = self.guard.configure_tools(ToolConfig())
        command_hooks: CommandHooks | None = None
        if self.hooks is None:
            command_hooks = self.guard.session_hooks(
                session_id, editor, state, writer.path, resumed=resumed is not None
            )
        engine = QueryEngine(
            session_id=session_id,
            cwd=self.root,
            provider=provider,
            tools=[*core_tools(), EXIT_PLAN_MODE_TOOL],
            editor=editor,
            rules=self.rules(extra_allow, extra_deny),
            hooks=self.hooks or command_hooks,
            config=EngineConfig(
                max_turns=max_turns if max_turns is not None else settings.max_turns,
                max_budget_usd=max_budget_usd
                if max_budget_usd is not None
                else settings.max_budget_usd,
            ),
            tool_config=tool_config,
            state=state,
            history=resumed.messages if resumed else None,
            transcript=writer,
            assembler=ContextAssembler(cwd=self.root, model=provider.model),
            tasks=TaskRegistry(writer.path.parent / session_id / "tasks"),
            title=title or (resumed.title if resumed else None),
            remember_rule=self._persist_rule,
        )
        if resumed is not None:
            engine.turns = resumed.turns
        self.guard.attach(engine, tool_config, command_hooks, extra_allow, extra_deny)
        self.sessions[session_id] = engine
        return engine

    def _persist_rule(self, kind: Literal["allow", "deny"], rule: str) -> None:
        try:
            add_local_rule(self.root, kind, rule)
        except OSError as e:
            log.warning("could not save the rule %s: %s", rule, e)

    def new_session(
        self,
        editor: Editor,
        *,
        model: str | None = None,
        mode: Mode | None = None,
        title: str | None = None,
        **limits: Any,
    ) -> QueryEngine:
        session_id = str(uuid.uuid4())
        writer = TranscriptWriter(self.store.session_path(self.root, session_id), session_id)
        writer.open()
        return self._engine(
            session_id=session_id,
            editor=editor,
            model=model,
            mode=mode,
            writer=writer,
            title=title,
            **limits,
        )

    async def load_session(
        self,
        session_id: str,
        editor: Editor,
        *,
        model: str | None = None,
        recover: bool = False,
        **limits: Any,
    ) -> tuple[QueryEngine, ResumedSession]:
        if session_id in self.sessions:
            raise SessionError(f"session {session_id} is already open")
        path = self.store.find(session_id)
        if path is None:
            raise SessionError(f"No conversation found with session ID: {session_id}")
        resumed, writer = await open_for_resume(path, session_id, recover=recover)
        engine = self._engine(
            session_id=session_id,
            editor=editor,
            model=model,
            mode=None,
            writer=writer,
            resumed=resumed,
            **limits,
        )
        return engine, resumed

    def list_sessions(self, limit: int | None = None) -> list[SessionInfo]:
        return self.store.list_sessions(self.root, limit)

    async def close_session(self, session_id: str) -> None:
        engine = self.sessions.pop(session_id, None)
        if engine is not None:
            await engine.close()
            await self.guard.detach(session_id)

    async def close(self) -> None:
        for session_id in list(self.sessions):
            await self.close_session(session_id)
        self.guard.close()
