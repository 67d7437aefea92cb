"""A workspace root and the sessions that run in it.

Front doors (LSP, ACP, CLI) create sessions here with their own Editor; the workspace
supplies settings, rules, the transcript store and the tool set.
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
from tether.permissions.policy import RuleSet
from tether.protocol.updates import Mode
from tether.providers.base import Provider
from tether.providers.registry import create_provider, parse_model_spec
from tether.settings.load import LoadedSettings, add_local_rule, load_settings
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState, ToolConfig
from tether.tools.registry import core_tools
from tether.transcript.resume import ResumedSession, resume
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
    ) -> None:
        self.root = root.resolve()
        self.store = store or TranscriptStore()
        self._overrides = overrides or {}
        self._user_settings = user_settings
        self.loaded: LoadedSettings = load_settings(self.root, self._overrides, user=user_settings)
        self.provider_factory = provider_factory
        self.hooks = hooks
        self.sessions: dict[str, QueryEngine] = {}

    @property
    def settings(self):
        return self.loaded.settings

    def reload_settings(self) -> None:
        self.loaded = load_settings(self.root, self._overrides, user=self._user_settings)

    def rules(
        self, extra_allow: list[str] | None = None, extra_deny: list[str] | None = None
    ) -> RuleSet:
        p = self.loaded.settings.permissions
        bad: list[str] = []
        sets: dict[str, list[str]] = {
            "allow": [*p.allow, *(extra_allow or [])],
            "ask": list(p.ask),
            "deny": [*p.deny, *(extra_deny or [])],
        }
        clean: dict[str, list[str]] = {}
        for kind, rules in sets.items():
            clean[kind] = []
            for rule in rules:
                try:
                    RuleSet.from_strings(allow=[rule])
                    clean[kind].append(rule)
                except ValueError as e:
                    bad.append(str(e))
        for b in bad:
            log.warning("ignoring %s", b)
        return RuleSet.from_strings(clean["allow"], clean["ask"], clean["deny"])

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
        tool_config = ToolConfig(sandbox=settings.sandbox.enabled)
        engine = QueryEngine(
            session_id=session_id,
            cwd=self.root,
            provider=provider,
            tools=core_tools(),
            editor=editor,
            rules=self.rules(extra_allow, extra_deny),
            hooks=self.hooks,
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

    def load_session(
        self, session_id: str, editor: Editor, *, model: str | None = None, **limits: Any
    ) -> tuple[QueryEngine, ResumedSession]:
        if session_id in self.sessions:
            raise SessionError(f"session {session_id} is already open")
        path = self.store.find(session_id)
        if path is None:
            raise SessionError(f"No conversation found with session ID: {session_id}")
        resumed = resume(path, session_id)
        writer = TranscriptWriter(path, session_id, last_uuid=resumed.last_uuid)
        writer.open()
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

    async def close(self) -> None:
        for session_id in list(self.sessions):
            await self.close_session(session_id)
