"""Everything a workspace's settings decide about safety, kept current for its sessions.

One ``WorkspaceGuard`` per workspace holds the merged settings (trust-filtered), the shell
sandbox, the settings watcher and, per session, the objects the engine was built with:
its rule set, tool config and command hooks. When a settings file changes, the next tool
call of any session (``refresh``, called first thing by the pipeline) reloads the files and
updates those objects in place — rules, hooks, sandbox policy, env — without a restart.

Trust is asked for here, before the first prompt of a session, and only when the project
files hold something that needs it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tether.core.environ import Caller, expand_home
from tether.editor.port import Editor
from tether.engine.engine import QueryEngine
from tether.hooks.command_hooks import CommandHooks
from tether.permissions.decision import RuleSet
from tether.permissions.rules import Rule
from tether.permissions.trust_dialog import ask_trust
from tether.sandbox.bwrap import Probe
from tether.sandbox.shell_sandbox import BwrapSandbox
from tether.settings.load import (
    ALL_SOURCES,
    LoadedSettings,
    SettingSources,
    load_settings,
    project_settings_paths,
    user_settings_path,
)
from tether.settings.model import Settings
from tether.settings.trust import TrustStore
from tether.settings.watch import SettingsWatcher
from tether.tools.context import SessionRunState, ToolConfig
from tether.transcript.store import data_dir

TrustQuestion = Callable[[Path, list[str]], Awaitable[bool]]
"""Asks the user whether to trust a workspace (its root, what waits for trust): yes/no."""

log = logging.getLogger(__name__)


def build_rules(
    settings: Settings,
    extra_allow: list[str] | None = None,
    extra_deny: list[str] | None = None,
    extra_ask: list[str] | None = None,
) -> RuleSet:
    """The settings' rules plus command-line (and session) ones; a malformed rule is
    skipped, loudly."""
    p = settings.permissions
    sets = {
        "allow": [*p.allow, *(extra_allow or [])],
        "ask": [*p.ask, *(extra_ask or [])],
        "deny": [*p.deny, *(extra_deny or [])],
    }
    clean: dict[str, list[str]] = {}
    for kind, rules in sets.items():
        clean[kind] = []
        for rule in rules:
            try:
                RuleSet.from_strings(allow=[rule])
            except ValueError as e:
                log.warning("ignoring permissions.%s rule: %s", kind, e)
                continue
            clean[kind].append(rule)
    return RuleSet.from_strings(clean["allow"], clean["ask"], clean["deny"])


@dataclass
class _Session:
    engine: QueryEngine
    config: ToolConfig
    hooks: CommandHooks | None
    extra_allow: list[str] = field(default_factory=lambda: list[str]())
    extra_deny: list[str] = field(default_factory=lambda: list[str]())
    extra_ask: list[str] = field(default_factory=lambda: list[str]())
    follow_model: Callable[[str | None], None] | None = None
    """Switches the session to the settings' new ``model`` (None: its model was chosen
    explicitly, and a change of the settings leaves it)."""


class WorkspaceGuard:
    def __init__(
        self,
        root: Path,
        overrides: dict[str, Any] | None = None,
        *,
        sources: SettingSources = ALL_SOURCES,
        trust: TrustStore | None = None,
        sandbox_probe: Probe | None = None,
        watch: bool = True,
        data: Path | None = None,
    ) -> None:
        """``data``: where the workspace keeps transcripts, when not the default data
        directory (a caller's ``TETHER_DATA_DIR`` in the warm daemon): hidden from
        commands as well."""
        self.root = root
        self._overrides = overrides or {}
        self._sources = sources
        self.trust_store = trust or TrustStore()
        self.trusted = self.trust_store.is_trusted(root)
        self._declined = False
        self._trust_lock: asyncio.Lock | None = None
        self.loaded = self._load()
        config_dir = self.trust_store.path.parent
        self.sandbox = BwrapSandbox(
            root,
            self.loaded.settings.sandbox,
            private=(config_dir, user_settings_path().parent, data_dir(), *filter(None, [data])),
            probe_result=sandbox_probe,
            also_readable=self._extra_dirs(),
        )
        self.watcher = SettingsWatcher([user_settings_path(), *project_settings_paths(root)])
        self._watch = watch
        self._sessions: dict[str, _Session] = {}

    # -- settings ----------------------------------------------------------------------------

    def _load(self) -> LoadedSettings:
        return load_settings(
            self.root, self._overrides, sources=self._sources, trusted=self.trusted
        )

    @property
    def warnings(self) -> list[str]:
        """What to tell the user about this workspace, once: settings problems and a shell
        sandbox that cannot run. The front door that opened the workspace shows them."""
        out = [f"settings: {w}" for w in self.loaded.warnings]
        if self.loaded.settings.sandbox.enabled and not self.sandbox.active:
            out.append(self.sandbox.describe())
        return out

    def reload(self) -> None:
        """Read the settings files again and apply them to every open session; a warning
        the new files brought is logged (the ones from before were shown already)."""
        before, model = set(self.warnings), self.loaded.settings.model
        self.loaded = self._load()
        settings = self.loaded.settings
        self.sandbox.configure(settings.sandbox, self._extra_dirs())
        for warning in self.warnings:
            if warning not in before:
                log.warning("%s", warning)
        for s in self._sessions.values():
            rules = build_rules(settings, s.extra_allow, s.extra_deny, s.extra_ask)
            s.engine.rules.replace_with(rules)
            self.configure_tools(s.config)
            if s.hooks is not None:
                s.hooks.configure(settings.hooks, settings.env)
            if s.follow_model is not None and settings.model != model:
                # A yes to the trust question brings the project's model: from the next
                # request on, the session that asked uses it (and later ones start on it).
                s.follow_model(settings.model)

    def refresh(self) -> None:
        """Apply changed settings files; cheap when nothing changed (the pipeline calls it
        before every tool call). A protected link a background command replaced is put
        back first, so a settings file planted through it is never read."""
        self.sandbox.restore_links()
        if self.watcher.take():
            self.reload()

    def configure_tools(self, config: ToolConfig) -> ToolConfig:
        settings = self.loaded.settings
        config.sandbox = settings.sandbox.enabled
        config.shell_sandbox = self.sandbox
        config.shell_env = dict(settings.env)
        config.additional_dirs = self._extra_dirs(config.caller_env)
        config.bypass_disabled = settings.permissions.disable_bypass_permissions_mode == "disable"
        config.network_allowed = list(settings.sandbox.network.allowed_domains)
        config.network_denied = list(settings.sandbox.network.denied_domains)
        return config

    def _extra_dirs(self, caller: Mapping[str, str] | None = None) -> list[Path]:
        """The settings' additional directories (``~``: the ``caller``'s home; None: this
        process's, as the sandbox, shared by the workspace's callers, sees them)."""
        dirs = self.loaded.settings.permissions.additional_directories
        return [self._dir(d, caller) for d in dirs]

    def _dir(self, raw: str, caller: Mapping[str, str] | None) -> Path:
        path = Path(expand_home(raw, caller))
        return Path(os.path.realpath(path if path.is_absolute() else self.root / path))

    # -- sessions ----------------------------------------------------------------------------

    def session_hooks(
        self,
        session_id: str,
        editor: Editor,
        state: SessionRunState,
        transcript: Path,
        *,
        resumed: bool,
        caller_env: Caller | None = None,
    ) -> CommandHooks:
        settings = self.loaded.settings
        return CommandHooks(
            self.root,
            session_id,
            settings.hooks,
            transcript_path=transcript,
            mode=lambda: state.mode,
            env=settings.env,
            before_first_prompt=lambda: self.ensure_trust(editor, session_id),
            source="resume" if resumed else "startup",
            refresh=self.refresh,
            caller_env=caller_env,
        )

    def attach(
        self,
        engine: QueryEngine,
        config: ToolConfig,
        hooks: CommandHooks | None,
        extra_allow: list[str] | None = None,
        extra_deny: list[str] | None = None,
        follow_model: Callable[[str | None], None] | None = None,
    ) -> None:
        """Keep ``engine`` current with the settings from now on (its model too, with
        ``follow_model``)."""
        self._sessions[engine.session_id] = _Session(
            engine,
            config,
            hooks,
            list(extra_allow or []),
            list(extra_deny or []),
            follow_model=follow_model,
        )
        if self._watch:
            self.watcher.start()

    def add_session_rules(
        self, session_id: str, kind: Literal["allow", "ask", "deny"], rules: list[str]
    ) -> None:
        """Rules for one session from now on, kept when the settings files change (an SDK
        program's ``updatedPermissions`` for the session)."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        extra = {"allow": session.extra_allow, "ask": session.extra_ask, "deny": session.extra_deny}
        live = getattr(session.engine.rules, kind)
        for text in rules:
            if text not in extra[kind]:
                extra[kind].append(text)
            rule = Rule.parse(text)
            if rule not in live:
                live.append(rule)

    async def detach(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None and session.hooks is not None:
            try:
                await session.hooks.session_end("other")
            except Exception:
                log.exception("SessionEnd hooks failed")

    async def ensure_trust(self, editor: Editor, session_id: str) -> None:
        """Ask once per workspace, and only if the project config holds something to run."""
        await self.settle_trust(
            lambda root, withheld: ask_trust(editor, root, withheld, session_id)
        )

    async def settle_trust(self, ask: TrustQuestion) -> None:
        """``ensure_trust`` with the question asked by ``ask`` (a front door that asks it
        before a session exists: the project's model waits for the answer)."""
        if self.trusted or self._declined or not self.loaded.withheld:
            return
        self._trust_lock = self._trust_lock or asyncio.Lock()
        async with self._trust_lock:
            if self.trusted or self._declined:
                return
            if not await ask(self.root, self.loaded.withheld):
                self._declined = True  # not asked again while the daemon runs
                return
            try:
                self.trust_store.trust(self.root)
            except OSError as e:
                log.warning("could not remember the trust decision: %s", e)
            self.trusted = True
            self.reload()

    def close(self) -> None:
        self.watcher.stop()
        self.sandbox.close()
