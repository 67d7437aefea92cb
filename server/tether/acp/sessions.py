"""The sessions of one ACP connection: workspaces by ``cwd``, engines by session id, turns.

Handlers in ``agent.py`` stay thin; here a request becomes engine calls, and engine updates
become ``session/update`` notifications sent in the order they happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
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
from tether.engine.engine import QueryEngine
from tether.engine.transitions import Terminal
from tether.errors import ConfigError, SessionError
from tether.protocol.updates import AgentMessageChunk, Mode, SessionUpdate
from tether.providers.base import Provider
from tether.skills.expand import CommandError
from tether.skills.session_prompt import command_turn, expand_for_session
from tether.transcript.chain import build_chain
from tether.transcript.load import TranscriptDamagedError, read_transcript
from tether.transcript.replay import history_updates
from tether.transcript.resume import ResumedSession
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace

log = logging.getLogger(__name__)

McpServer = wire.HttpMcpServer | wire.SseMcpServer | wire.AcpMcpServer | wire.McpServerStdio


def _client_mcp(root: Path, engine: QueryEngine, servers: list[McpServer]) -> Any:
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
    attach(engine, manager)
    return manager


def invalid(message: str, **data: Any) -> RequestError:
    return RequestError(-32602, message, data or None)


@dataclass
class AcpSession:
    workspace: Workspace
    engine: QueryEngine
    view: View
    commands: list[commands.Command]
    mcp_servers: list[McpServer] = field(default_factory=lambda: list[McpServer]())
    """The MCP servers the client gave for this session."""
    mcp: Any = None
    """Their manager (``tether.mcp.manager.McpManager``), closed with the session."""

    @property
    def mode(self) -> Mode:
        return self.engine.state.mode

    def updates(self, update: SessionUpdate) -> list[AcpUpdate]:
        self.view.session_cost = self.engine.meter.session.cost_usd
        return session_updates(update, self.view)


class AcpSessions:
    def __init__(self, client: Client, model: str | None = None) -> None:
        self.client = client
        self.model = model
        """``tether acp --model``: overrides the settings of every workspace."""
        self.caps = wire.ClientCapabilities()
        self.outbox = Outbox(client)
        self.workspaces: dict[Path, Workspace] = {}
        self.sessions: dict[str, AcpSession] = {}

    # -- lookup -----------------------------------------------------------------------

    def workspace(self, cwd: str) -> Workspace:
        path = Path(cwd)
        if not path.is_absolute():
            raise invalid(f"cwd must be an absolute path: {cwd}", cwd=cwd)
        root = path.resolve()
        if not root.is_dir():
            raise invalid(f"cwd is not a directory: {cwd}", cwd=cwd)
        if root not in self.workspaces:
            workspace = Workspace(root, overrides={"model": self.model} if self.model else None)
            for warning in workspace.loaded.warnings:
                log.warning("settings: %s", warning)
            self.workspaces[root] = workspace
        return self.workspaces[root]

    def get(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid(f"unknown sessionId: {session_id}", sessionId=session_id)
        return session

    def _model_for(self, workspace: Workspace) -> str:
        spec = workspace.settings.model
        try:
            problem = credentials_problem(spec, workspace.root)
            if problem is None:
                return resolve_model(spec, workspace.root)
        except ConfigError as e:
            raise invalid(str(e))
        raise RequestError(-32000, f"Authentication required: {problem}", {"message": problem})

    # -- lifecycle --------------------------------------------------------------------

    def new_session(self, cwd: str, mcp_servers: list[McpServer]) -> AcpSession:
        workspace = self.workspace(cwd)
        model = self._model_for(workspace)
        view = View(cwd=workspace.root, model=model)
        editor = AcpEditor(self.client, self.caps, view)
        try:
            engine = workspace.new_session(editor, model=model)
        except ConfigError as e:
            raise invalid(str(e))
        return self._attach(workspace, engine, editor, mcp_servers)

    async def open_session(
        self, cwd: str, session_id: str, mcp_servers: list[McpServer], *, replay: bool
    ) -> AcpSession:
        """``session/load`` (``replay``: the history is sent first) and ``session/resume``."""
        session = self.sessions.get(session_id)
        if session is not None:
            writer = session.engine.transcript
            records = read_transcript(writer.path).records if writer is not None else []
            chain = build_chain(records)[0]
        else:
            workspace = self.workspace(cwd)
            if workspace.store.find(session_id) is None:
                raise RequestError(-32002, f"No session {session_id}", {"sessionId": session_id})
            model = self._model_for(workspace)
            editor = AcpEditor(self.client, self.caps, View(cwd=workspace.root, model=model))
            try:
                engine, resumed = await self._load(workspace, session_id, editor, model)
            except (SessionError, ConfigError) as e:
                raise invalid(str(e), sessionId=session_id)
            session = self._attach(workspace, engine, editor, mcp_servers)
            chain = resumed.chain
        if replay:
            # Terminals of earlier turns are gone: replayed Bash calls show their text.
            view = dataclasses.replace(session.view, replay=True, terminals={})
            for _turn, update in history_updates(chain, session.engine.describe_call):
                await self.outbox.send(session_id, session_updates(update, view))
        return session

    async def _load(
        self, workspace: Workspace, session_id: str, editor: AcpEditor, model: str
    ) -> tuple[QueryEngine, ResumedSession]:
        try:
            return await workspace.load_session(session_id, editor, model=model)
        except TranscriptDamagedError as e:
            # An editor has no way to ask "recover?": load up to the last good point (the
            # rest is set aside next to the transcript, not deleted).
            log.warning("%s; recovering", e)
            return await workspace.load_session(session_id, editor, model=model, recover=True)

    def _attach(
        self,
        workspace: Workspace,
        engine: QueryEngine,
        editor: AcpEditor,
        mcp_servers: list[McpServer],
    ) -> AcpSession:
        session_id = engine.session_id
        editor.session_id = session_id
        if self.caps.terminal:
            terminals = ClientTerminals(self.client)
            use_client_terminals(engine, terminals)
            editor.view.terminals = terminals.by_tool_call
        session = AcpSession(
            workspace, engine, editor.view, commands.discover(workspace.root), list(mcp_servers)
        )
        if mcp_servers:
            session.mcp = _client_mcp(workspace.root, engine, mcp_servers)
        engine.on_idle_update = lambda update: self.outbox.post(session_id, session.updates(update))
        self.sessions[session_id] = session
        return session

    def announce_commands(self, session: AcpSession) -> None:
        """After every new/load/resume answer: Zed rejects ``/`` input without a list."""
        self.outbox.post_after_reply(
            session.engine.session_id, [commands.available(session.commands)]
        )

    async def close_session(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.workspace.close_session(session_id)
            if session.mcp is not None:
                await session.mcp.close()

    async def list_sessions(self, cwd: str | None) -> list[wire.SessionInfo]:
        root = Path(cwd).resolve() if cwd else None
        infos = await asyncio.to_thread(TranscriptStore().list_sessions, root)
        return [
            wire.SessionInfo(
                session_id=i.session_id, cwd=i.workspace, title=i.title, updated_at=i.updated_at
            )
            for i in infos
            if i.workspace
        ]

    async def shutdown(self) -> None:
        for session in self.sessions.values():
            session.engine.cancel()
        await self.outbox.close()
        for workspace in list(self.workspaces.values()):
            await workspace.close()

    # -- turns ------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: Sequence[AcpPromptBlock]) -> wire.StopReason:
        session = self.get(session_id)
        engine = session.engine
        try:
            expanded = await expand_for_session(
                engine,
                prompt_blocks(prompt),
                commands=session.commands,
                mcp=session.workspace.mcp_prompts(),
            )
        except CommandError as e:
            raise RequestError.invalid_params({"message": str(e)}) from e
        blocks = expanded.blocks
        async with command_turn(engine, expanded, session.workspace.model_provider):
            if engine.busy:
                # Never interleaved with the running turn: injected at its next boundary,
                # and answered when the turn that took it ends.
                future = await engine.enqueue(blocks)
                return stop_reason((await asyncio.shield(future)).terminal)
            stream = engine.start(blocks)
            try:
                async for update in stream:
                    await self.outbox.send(session_id, session.updates(update))
            finally:
                await stream.aclose()
        assert engine.last_result is not None
        return await self._finish(session, engine.last_result.terminal)

    async def _finish(self, session: AcpSession, terminal: Terminal) -> wire.StopReason:
        notice = stop_notice(terminal)
        if notice is not None:
            await self.outbox.send(
                session.engine.session_id, session.updates(AgentMessageChunk(text=notice))
            )
        return stop_reason(terminal)

    def cancel(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            log.info("session/cancel for unknown session %s", session_id)
            return
        session.engine.cancel()

    def set_mode(self, session_id: str, mode: Mode) -> None:
        self.get(session_id).engine.set_mode(mode)

    def set_model(self, session_id: str, model: str) -> None:
        session = self.get(session_id)
        root = session.workspace.root
        try:
            problem = credentials_problem(model, root)
            if problem is not None:
                raise RequestError(-32000, f"Authentication required: {problem}")
            provider = session.workspace.provider_factory(model, root)
        except ConfigError as e:
            raise invalid(str(e))
        switch_provider(session.engine, provider)
        session.view.model = model


def switch_provider(engine: QueryEngine, provider: Provider) -> None:
    """Point a live session at another model, from its next request on."""
    engine.set_provider(provider)
