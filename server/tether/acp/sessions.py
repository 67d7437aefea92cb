"""The sessions of one ACP connection: workspaces by ``cwd``, sessions by id, turns.

Handlers in ``agent.py`` stay thin; here a request becomes session calls, and session updates
become ``session/update`` notifications sent in the order they happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acp.schema as wire
from acp import Client, RequestError

from tether.acp import commands
from tether.acp.bridge import AcpEditor
from tether.acp.config import credentials_problem, resolve_model
from tether.acp.content import AcpPromptBlock, prompt_blocks
from tether.acp.mapping import AcpUpdate, View, session_updates, stop_notice, stop_reason
from tether.acp.outbox import Outbox
from tether.acp.terminal import ClientTerminals, use_client_terminals
from tether.core.files import os_error_text
from tether.engine.transitions import Terminal
from tether.errors import ConfigError, SessionError
from tether.mcp.manager import McpManager
from tether.protocol.updates import AgentMessageChunk, Mode, SessionUpdate
from tether.session.session import Session
from tether.settings.trust import model_waits_for_trust, withheld_model
from tether.skills.expand import CommandError
from tether.transcript.load import TranscriptDamagedError
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions
from tether.workspace.registry import Sessions

log = logging.getLogger(__name__)

McpServer = wire.HttpMcpServer | wire.SseMcpServer | wire.AcpMcpServer | wire.McpServerStdio


def _client_mcp(root: Path, session: Session, servers: list[McpServer]) -> McpManager:
    """The client's MCP servers for one session: connected, their tools in the pool (and
    through the same permission pipeline as every tool)."""
    from tether.mcp.attach import attach
    from tether.mcp.config import McpConfig, parse_server
    from tether.mcp.manager import McpManager

    config = McpConfig()
    for server in servers:
        try:
            config.servers.append(
                parse_server(server.name, server.model_dump(by_alias=True), "client")
            )
        except ValueError as e:
            config.problems[server.name] = str(e)
            log.warning("client MCP server %s skipped: %s", server.name, e)
    manager = McpManager(root, config)
    manager.start()
    attach(session.engine, manager)
    return manager


def invalid(message: str, **data: Any) -> RequestError:
    return RequestError(-32602, message, data or None)


@dataclass
class AcpSession:
    session: Session
    view: View
    commands: list[commands.Command]
    mcp: McpManager | None = None
    """The manager of the MCP servers the client gave for this session."""
    stop_following: Callable[[], None] = lambda: None

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def mode(self) -> Mode:
        return self.session.mode

    def updates(self, update: SessionUpdate) -> list[AcpUpdate]:
        self.view.session_cost = self.session.usage.cost_usd
        return session_updates(update, self.view)


class AcpSessions:
    def __init__(self, client: Client, model: str | None = None) -> None:
        self.client = client
        self.model = model
        """``tether acp --model``: overrides the settings of every workspace."""
        self.caps = wire.ClientCapabilities()
        self.outbox = Outbox(client)
        self.registry = Sessions(self._make_workspace)
        self.sessions: dict[str, AcpSession] = {}

    # -- lookup -----------------------------------------------------------------------

    def _make_workspace(self, root: Path) -> Workspace:
        return Workspace(root, overrides={"model": self.model} if self.model else None)

    def workspace(self, cwd: str) -> Workspace:
        path = _cwd_path(cwd)
        if not path.is_absolute():
            raise invalid(f"cwd must be an absolute path: {cwd}", cwd=cwd)
        try:
            root = path.resolve()
            is_dir = root.is_dir()
        except OSError as e:  # a symlink loop, a name too long
            raise invalid(f"cwd cannot be used: {os_error_text(e)}: {cwd}", cwd=cwd) from None
        if not is_dir:
            raise invalid(f"cwd is not a directory: {cwd}", cwd=cwd)
        return self.registry.workspace(root)

    def get(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid(f"unknown sessionId: {session_id}", sessionId=session_id)
        return session

    def _model_for(self, workspace: Workspace) -> str:
        spec = workspace.settings.model
        waiting = None if self.model else withheld_model(workspace.loaded.withheld)
        try:
            problem = credentials_problem(spec, workspace.root)
            if problem is None:
                return resolve_model(spec, workspace.root)
        except ConfigError as e:
            raise invalid(model_waits_for_trust(waiting) if waiting else str(e))
        if waiting:  # no model without the project's, which waits for trust
            problem = model_waits_for_trust(waiting)
        raise RequestError(-32000, f"Authentication required: {problem}", {"message": problem})

    # -- lifecycle --------------------------------------------------------------------

    def new_session(self, cwd: str, mcp_servers: list[McpServer]) -> AcpSession:
        workspace = self.workspace(cwd)
        model = self._model_for(workspace)
        editor = AcpEditor(self.client, self.caps, View(cwd=workspace.root, model=model))
        editor.session_id = str(uuid.uuid4())
        try:
            session = workspace.new_session(editor, self._options(editor))
        except ConfigError as e:
            raise invalid(str(e))
        return self._attach(workspace, session, editor, mcp_servers)

    def _options(self, editor: AcpEditor) -> SessionOptions:
        """The model is the settings' (``--model`` is their top layer), not pinned: a yes to
        the trust question brings the project's model to the session. No turns of its own
        between prompts: ACP clients follow a session while prompting."""
        return SessionOptions(session_id=editor.session_id, auto_wake=False)

    async def open_session(
        self, cwd: str, session_id: str, mcp_servers: list[McpServer], *, replay: bool
    ) -> AcpSession:
        """``session/load`` (``replay``: the history is sent first) and ``session/resume``."""
        acp_session = self.sessions.get(session_id)
        if acp_session is None:
            workspace = self.workspace(cwd)
            if workspace.store.find(session_id) is None:
                raise RequestError(-32002, f"No session {session_id}", {"sessionId": session_id})
            model = self._model_for(workspace)
            editor = AcpEditor(self.client, self.caps, View(cwd=workspace.root, model=model))
            editor.session_id = session_id
            try:
                session = await self._load(workspace, session_id, editor)
            except (SessionError, ConfigError) as e:
                raise invalid(str(e), sessionId=session_id)
            acp_session = self._attach(workspace, session, editor, mcp_servers)
        if replay:
            # Terminals of earlier turns are gone: replayed Bash calls show their text.
            view = dataclasses.replace(acp_session.view, replay=True, terminals={})
            for _turn, update in await acp_session.session.history():
                await self.outbox.send(session_id, session_updates(update, view))
        return acp_session

    async def _load(self, workspace: Workspace, session_id: str, editor: AcpEditor) -> Session:
        options = self._options(editor)
        try:
            return await workspace.load_session(session_id, editor, options)
        except TranscriptDamagedError as e:
            # An editor has no way to ask "recover?": load up to the last good point (the
            # rest is set aside next to the transcript, not deleted).
            log.warning("%s; recovering", e)
            return await workspace.load_session(session_id, editor, options, recover=True)

    def _attach(
        self,
        workspace: Workspace,
        session: Session,
        editor: AcpEditor,
        mcp_servers: list[McpServer],
    ) -> AcpSession:
        session_id = session.session_id
        if self.caps.terminal:
            terminals = ClientTerminals(self.client)
            use_client_terminals(session.engine, terminals)
            editor.view.terminals = terminals.by_tool_call
        acp_session = AcpSession(session, editor.view, commands.discover(workspace.root))
        if mcp_servers:
            acp_session.mcp = _client_mcp(workspace.root, session, mcp_servers)

        def follow(_turn_id: str, update: SessionUpdate) -> None:
            self.outbox.post(session_id, acp_session.updates(update))

        acp_session.stop_following = session.events.subscribe(follow)
        self.sessions[session_id] = acp_session
        return acp_session

    def announce_commands(self, session: AcpSession) -> None:
        """After every new/load/resume answer: Zed rejects ``/`` input without a list."""
        self.outbox.post_after_reply(session.session_id, [commands.available(session.commands)])

    async def close_session(self, session_id: str) -> None:
        acp_session = self.sessions.pop(session_id, None)
        if acp_session is not None:
            acp_session.stop_following()
            await acp_session.session.close()
            if acp_session.mcp is not None:
                await acp_session.mcp.close()

    async def list_sessions(self, cwd: str | None) -> list[wire.SessionInfo]:
        try:
            root = _cwd_path(cwd).resolve() if cwd else None
        except OSError as e:
            raise invalid(f"cwd cannot be used: {os_error_text(e)}: {cwd}", cwd=cwd) from None
        infos = await asyncio.to_thread(TranscriptStore().list_sessions, root)
        return [
            wire.SessionInfo(
                session_id=i.session_id, cwd=i.workspace, title=i.title, updated_at=i.updated_at
            )
            for i in infos
            if i.workspace
        ]

    async def shutdown(self) -> None:
        for acp_session in self.sessions.values():
            acp_session.session.cancel()
        await self.outbox.close()
        for acp_session in list(self.sessions.values()):
            if acp_session.mcp is not None:
                await acp_session.mcp.close()
        await self.registry.shutdown()

    # -- turns ------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: Sequence[AcpPromptBlock]) -> wire.StopReason:
        acp_session = self.get(session_id)
        # Updates go out through the outbox in order; the answer waits for them.
        try:
            result = await acp_session.session.prompt(prompt_blocks(prompt))
        except CommandError as e:  # a slash command that cannot be expanded
            raise invalid(str(e))
        await self.outbox.drain(session_id)
        return await self._finish(acp_session, result.terminal)

    async def _finish(self, acp_session: AcpSession, terminal: Terminal) -> wire.StopReason:
        notice = stop_notice(terminal)
        if notice is not None:
            await self.outbox.send(
                acp_session.session_id, acp_session.updates(AgentMessageChunk(text=notice))
            )
        return stop_reason(terminal)

    def cancel(self, session_id: str) -> None:
        acp_session = self.sessions.get(session_id)
        if acp_session is None:
            log.info("session/cancel for unknown session %s", session_id)
            return
        acp_session.session.cancel()

    def set_mode(self, session_id: str, mode: Mode) -> None:
        self.get(session_id).session.set_mode(mode)

    def set_model(self, session_id: str, model: str) -> None:
        acp_session = self.get(session_id)
        root = acp_session.session.cwd
        try:
            problem = credentials_problem(model, root)
            if problem is not None:
                raise RequestError(-32000, f"Authentication required: {problem}")
            acp_session.session.set_model(model)
        except ConfigError as e:
            raise invalid(str(e))
        acp_session.view.model = model


def _cwd_path(cwd: str) -> Path:
    """``cwd`` as a path; a NUL (which no path can hold) is a wrong param."""
    if "\0" in cwd:
        raise invalid(f"cwd contains a NUL character, which no path can hold: {cwd!r}", cwd=cwd)
    return Path(cwd)
