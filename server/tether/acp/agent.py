"""``TetherAgent``: the ACP methods, each a thin handler over ``AcpSessions``.

Errors, by plane (see ``tether.errors``)::

    wire errors        -> ``RequestError`` with a fixed JSON-RPC code: -32602 bad params or
                          an unknown session (params failing the SDK's pydantic models get
                          it before a handler runs), -32601 unknown method (the SDK's
                          router), -32000 missing credentials, -32002 no such session to
                          load, -32603 a turn that failed (the session stays usable).
    tool failures      -> never reach the wire: they are tool results the model reads.
    programmer errors  -> the SDK answers -32603 and logs the traceback to stderr.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import acp.schema as wire
from acp import PROTOCOL_VERSION, Client, RequestError

from tether.acp.config import (
    API_KEY_METHOD,
    ConfigOption,
    agent_capabilities,
    agent_info,
    auth_methods,
    config_options,
    credentials_problem,
    model_choices,
    parse_mode,
    session_modes,
)
from tether.acp.content import AcpPromptBlock
from tether.acp.sessions import AcpSession, AcpSessions, McpServer, invalid
from tether.errors import ConfigError

log = logging.getLogger(__name__)


class TetherAgent:
    def __init__(self, model: str | None = None) -> None:
        self._model = model
        self._sessions: AcpSessions | None = None

    def on_connect(self, conn: Client) -> None:
        self._sessions = AcpSessions(conn, self._model)

    @property
    def sessions(self) -> AcpSessions:
        if self._sessions is None:
            raise RuntimeError("the agent is not connected")
        return self._sessions

    async def shutdown(self) -> None:
        if self._sessions is not None:
            await self._sessions.shutdown()

    # -- handshake --------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: wire.ClientCapabilities | None = None,
        client_info: wire.Implementation | None = None,
        **kwargs: Any,
    ) -> wire.InitializeResponse:
        if client_capabilities is not None:
            self.sessions.caps = client_capabilities
        if client_info is not None:
            log.info("client: %s %s", client_info.name, client_info.version)
        # Version 1 is the only one there is; a client asking for another may disconnect.
        return wire.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=agent_capabilities(),
            auth_methods=list(auth_methods()),
            agent_info=agent_info(),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> wire.AuthenticateResponse:
        if method_id != API_KEY_METHOD:
            raise invalid(f"unknown auth method: {method_id}", methodId=method_id)
        try:
            problem = credentials_problem(self._model, Path.cwd())
        except ConfigError as e:
            raise invalid(str(e))
        if problem is not None:
            raise RequestError(-32000, f"Authentication required: {problem}", {"message": problem})
        return wire.AuthenticateResponse()

    # -- sessions ---------------------------------------------------------------------

    def _state(self, session: AcpSession) -> tuple[wire.SessionModeState, list[ConfigOption]]:
        """The mode goes out twice, as modes and as a config option: clients read either."""
        return session_modes(session.mode), config_options(session.mode, session.view.model)

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> wire.NewSessionResponse:
        session = self.sessions.new_session(cwd, mcp_servers or [])
        self.sessions.announce_commands(session)
        modes, options = self._state(session)
        return wire.NewSessionResponse(
            session_id=session.session_id, modes=modes, config_options=options
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> wire.LoadSessionResponse:
        session = await self.sessions.open_session(cwd, session_id, mcp_servers or [], replay=True)
        self.sessions.announce_commands(session)
        modes, options = self._state(session)
        return wire.LoadSessionResponse(modes=modes, config_options=options)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> wire.ResumeSessionResponse:
        session = await self.sessions.open_session(cwd, session_id, mcp_servers or [], replay=False)
        self.sessions.announce_commands(session)
        modes, options = self._state(session)
        return wire.ResumeSessionResponse(modes=modes, config_options=options)

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> wire.ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")

    async def close_session(self, session_id: str, **kwargs: Any) -> wire.CloseSessionResponse:
        await self.sessions.close_session(session_id)
        return wire.CloseSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> wire.ListSessionsResponse:
        # One page: a workspace's sessions are few, and the client sorts them itself.
        return wire.ListSessionsResponse(sessions=await self.sessions.list_sessions(cwd))

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> wire.SetSessionModeResponse:
        mode = parse_mode(mode_id)
        if mode is None:
            raise invalid(f"unknown mode: {mode_id}", modeId=mode_id)
        self.sessions.set_mode(session_id, mode)
        return wire.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> wire.SetSessionConfigOptionResponse:
        session = self.sessions.get(session_id)
        mode = parse_mode(value) if isinstance(value, str) else None
        if config_id == "mode" and mode is not None:
            self.sessions.set_mode(session_id, mode)
        elif config_id == "model" and any(value == v for v, _ in model_choices(session.view.model)):
            self.sessions.set_model(session_id, str(value))
        else:
            raise invalid(f"no such option or value: {config_id} = {value!r}", configId=config_id)
        return wire.SetSessionConfigOptionResponse(
            config_options=config_options(session.mode, session.view.model)
        )

    # -- turns ------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[AcpPromptBlock], **kwargs: Any
    ) -> wire.PromptResponse:
        return wire.PromptResponse(stop_reason=await self.sessions.prompt(session_id, prompt))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.sessions.cancel(session_id)

    # -- extensions -------------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignoring extension notification _%s", method)
