"""The LSP front door's sessions: workspace folders, editors per session, diagnostics.

Handlers stay thin; here a request becomes calls on the session core
(``tether.session.Session``), and a session's updates become ``tether/sessionUpdate``
notifications and ``$/progress`` (``turns.TurnPublisher``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args
from urllib.parse import unquote, urlparse

from lsprotocol import types

from tether.core.environ import Caller
from tether.errors import ConfigError, SessionError
from tether.lsp.bridge import LspEditor
from tether.lsp.changes import listing_to_wire, outcome_to_wire
from tether.lsp.diagnostics import DiagnosticsStore, diagnostics_source
from tether.lsp.params import (
    ChangesParams,
    CompactParams,
    ListChangesParams,
    ListSessionsParams,
    NewSessionParams,
    PromptParams,
    RewindParams,
    SetModeParams,
    StopTaskParams,
)
from tether.lsp.server import TetherServer
from tether.lsp.turns import ProgressLook, ProgressToken, TurnPublisher, encode
from tether.protocol.content import in_encoding
from tether.protocol.updates import Mode
from tether.session.change_model import Selection
from tether.session.history import History

if TYPE_CHECKING:
    from tether.engine.turns import TurnResult
    from tether.protocol.content import ContentBlock

    # The engine stack is imported on first use (and warmed in the background after
    # initialize), so that the daemon answers `initialize` quickly.
    from tether.session.hosted import HostedSession
    from tether.session.session import Session
    from tether.workspace import Workspace
    from tether.workspace.options import SessionOptions
    from tether.workspace.registry import Sessions

log = logging.getLogger(__name__)


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"not a file URI: {uri}")
    return Path(unquote(parsed.path))


def changed_path(uri: str | None) -> Path | None:
    """The file a change-set request names (as the checkpoints know it: resolved)."""
    if uri is None:
        return None
    try:
        return uri_to_path(uri).resolve()
    except ValueError as e:
        raise SessionError(str(e))


def selection(params: ChangesParams) -> Selection:
    return Selection(tuple(params.hunk_ids), params.turn_id, changed_path(params.uri))


class SessionHub:
    def __init__(self, server: TetherServer, sessions: Sessions | None = None) -> None:
        self.server = server
        self.folders: list[Path] = []
        """Workspace roots in the order the editor gave them."""
        self.diagnostics = DiagnosticsStore()
        self.init_options: dict[str, Any] = {}
        self.client_env: Caller | None = None
        """Whom this client's sessions work for (the warm daemon's clients send their
        environment and umask); None: this process."""
        self._sessions = sessions
        self._shared = sessions is not None
        """The warm daemon's registry, shared with its other clients: leaving closes only
        what nobody else follows."""
        self._publishers: dict[str, TurnPublisher] = {}
        self._editors: dict[str, LspEditor] = {}
        """This connection's editor in each session it follows."""
        self._detach: dict[str, Callable[[], None]] = {}
        self._owned: set[str] = set()
        """Sessions this client created or opened: they work for it (``client_env``)."""
        self._moving: set[asyncio.Future[None]] = set()

    @property
    def sessions(self) -> Sessions:
        if self._sessions is None:
            from tether.workspace.registry import Sessions

            self._sessions = Sessions(self._make_workspace)
        return self._sessions

    # -- workspaces -------------------------------------------------------------------

    def _make_workspace(self, root: Path) -> Workspace:
        from tether.workspace import Workspace

        workspace = Workspace(root)
        for warning in workspace.warnings:
            self._log(types.MessageType.Warning, warning)
        return workspace

    def _init_model(self) -> str | None:
        value = self.init_options.get("model")
        return value if isinstance(value, str) and value else None

    def _init_mode(self) -> Mode | None:
        value = self.init_options.get("permissionMode")
        for mode in get_args(Mode):
            if value == mode:
                return mode
        if value is not None:
            self._log(types.MessageType.Warning, f"unknown permissionMode {value!r} ignored")
        return None

    def add_folder(self, uri: str) -> None:
        root = uri_to_path(uri).resolve()
        if root not in self.folders:
            self.folders.append(root)

    def forget_folder(self, uri: str) -> None:
        """Stop offering a folder at once; its sessions close in ``remove_folder``."""
        root = uri_to_path(uri).resolve()
        if root in self.folders:
            self.folders.remove(root)

    async def remove_folder(self, uri: str) -> None:
        root = uri_to_path(uri).resolve()
        self.forget_folder(uri)
        workspace = self.sessions.workspaces.get(root)
        if workspace is not None:
            for session_id in workspace.sessions:
                self._unfollow(session_id)
        await self.sessions.close_workspace(root)

    def root_for(self, uri: str | None) -> Path:
        if uri is None:
            if not self.folders:
                raise SessionError("no workspace folder is open")
            return self.folders[0]
        try:
            root = uri_to_path(uri).resolve()
        except ValueError as e:
            raise SessionError(str(e))
        if root not in self.folders:
            raise SessionError(f"{uri} is not a workspace folder of this editor")
        return root

    @property
    def workspaces(self) -> list[Workspace]:
        return [self.sessions.workspace(root) for root in self.folders]

    def followed(self, session_id: str) -> Session | HostedSession:
        """A session this connection may follow: its own kind, or a print-mode call's."""
        return self.sessions.hosted.get(session_id) or self.sessions.get(session_id)

    def get(self, session_id: str) -> Session:
        if session_id in self.sessions.hosted:
            raise SessionError(
                f"the session {session_id} is run by `tether -p` in another terminal: here it "
                "can be followed and its turn cancelled, not prompted or changed"
            )
        return self.sessions.get(session_id)

    # -- sessions ---------------------------------------------------------------------

    def _options(self, editor: LspEditor, params: NewSessionParams | None = None) -> SessionOptions:
        from tether.workspace.options import SessionOptions

        source = diagnostics_source(
            self.diagnostics, editor.edited, lambda: self.server.features.diagnostics
        )
        # initializationOptions give this editor's defaults for model and mode.
        model, mode = self._init_model(), self._init_mode()
        if params is None:
            return SessionOptions(
                model=model, default_mode=mode, attachments=[source], caller=self.client_env
            )
        return SessionOptions(
            session_id=editor.session_id,
            model=params.model or model,
            mode=params.permission_mode or mode,
            title=params.title,
            attachments=[source],
            caller=self.client_env,
        )

    def _follow(self, session: Session, editor: LspEditor) -> None:
        session_id = session.session_id
        if session_id not in self._publishers:
            self._publishers[session_id] = TurnPublisher(self.server, session)
        if session_id not in self._editors:
            self._editors[session_id] = editor
            self._detach[session_id] = session.attach(editor)

    def _unfollow(self, session_id: str) -> None:
        publisher = self._publishers.pop(session_id, None)
        if publisher is not None:
            publisher.stop()
        self._editors.pop(session_id, None)
        detach = self._detach.pop(session_id, None)
        if detach is not None:
            detach()

    def new_session(self, params: NewSessionParams) -> str:
        root = self.root_for(params.workspace_folder)
        editor = LspEditor(self.server, str(uuid.uuid4()))
        try:
            session = self.sessions.new(root, editor, self._options(editor, params))
        except ConfigError as e:
            raise SessionError(str(e))
        self._follow(session, editor)
        self._owned.add(session.session_id)
        return session.session_id

    async def load_session(self, session_id: str, *, recover: bool = False) -> History:
        hosted = self.sessions.hosted.get(session_id)
        if hosted is not None:
            # A print-mode call's session: followed here, driven (and asked) there.
            if session_id not in self._publishers:
                self._publishers[session_id] = TurnPublisher(self.server, hosted)
            return await hosted.full_history()
        editor = self._editors.get(session_id) or LspEditor(self.server, session_id)
        session = self.sessions.find(session_id)
        loaded_here = session is None
        if session is None:
            root = self.sessions.stored_in(self.folders, session_id)
            if root is None:
                raise SessionError(f"unknown sessionId: {session_id}")
            try:
                session = await self.sessions.load(
                    root, session_id, editor, self._options(editor), recover=recover
                )
            except ConfigError as e:
                raise SessionError(str(e))
            self._owned.add(session_id)
        self._follow(session, editor)
        try:
            return await session.full_history()
        except BaseException:
            if loaded_here:  # a load that failed leaves the session closed and unlocked
                self._unfollow(session_id)
                await session.close()
            raise

    async def list_sessions(self, params: ListSessionsParams) -> list[dict[str, Any]]:
        roots = (
            [self.root_for(params.workspace_folder)] if params.workspace_folder else self.folders
        )
        return [
            {
                "sessionId": i.session_id,
                "title": i.title,
                "workspaceFolder": Path(i.workspace).as_uri() if i.workspace else None,
                "createdAt": i.created_at,
                "updatedAt": i.updated_at,
                "turns": i.turns,
            }
            for i in await self.sessions.list(roots, params.limit)
        ]

    def set_mode(self, params: SetModeParams) -> None:
        self.get(params.session_id).set_mode(params.mode)

    def cancel(self, session_id: str) -> None:
        hosted = self.sessions.hosted.get(session_id)
        if hosted is not None:
            hosted.cancel()
            return
        self.get(session_id).cancel()

    # -- prompts ----------------------------------------------------------------------

    async def prompt(self, params: PromptParams) -> dict[str, Any]:
        session = self.get(params.session_id)
        if self._moving:  # a new environment sent before this prompt applies to it
            await asyncio.gather(*self._moving)
        # Selections count characters as this connection negotiated (UTF-8 for Neovim).
        blocks = in_encoding(params.prompt, self.server.features.encoding)
        return encode(await self.run(session, blocks, token=params.work_done_token))

    async def run(
        self,
        session: Session,
        blocks: Sequence[ContentBlock],
        *,
        token: ProgressToken | None = None,
        look: ProgressLook | None = None,
        turn_id: str | None = None,
    ) -> TurnResult:
        """A turn of ``session`` driven by this connection (queued into the running turn
        if there is one), shown as ``look``."""
        # Another client's session (the warm daemon shares them): follow it from now on.
        self._follow(session, LspEditor(self.server, session.session_id))
        publisher = self._publishers[session.session_id]
        started = None
        if not session.busy:
            started = await publisher.prompt_turn(token, look, turn_id)
        try:
            return await session.prompt(
                blocks, turn_id=started, via=self._editors.get(session.session_id)
            )
        finally:
            if started is not None:
                publisher.end_unfinished(started)

    def list_tasks(self, session_id: str) -> list[dict[str, Any]]:
        return [
            {
                "taskId": t.id,
                "kind": t.kind,
                "description": t.description,
                "status": t.status,
                "toolCallId": t.tool_use_id,
                "outputFile": str(t.output_path),
                "summary": t.summary or None,
            }
            for t in self.get(session_id).tasks()
        ]

    async def stop_task(self, params: StopTaskParams) -> bool:
        return await self.get(params.session_id).stop_task(params.task_id)

    async def compact(self, params: CompactParams) -> dict[str, Any]:
        update = await self.get(params.session_id).compact(params.instructions)
        return {"tokensBefore": update.tokens_before, "tokensAfter": update.tokens_after}

    async def rewind(self, params: RewindParams) -> dict[str, Any]:
        rewound = await self.get(params.session_id).rewind(params.turn_id)
        out: dict[str, Any] = {"restored": [p.as_uri() for p in rewound.restored]}
        if rewound.failed:
            out["notRestored"] = [
                {"uri": o.path.as_uri(), "reason": o.problem} for o in rewound.failed
            ]
        return out

    # -- the change set ---------------------------------------------------------------

    def editor_of(self, session: Session) -> LspEditor:
        """This connection's editor in ``session`` (which it follows from now on)."""
        self._follow(session, LspEditor(self.server, session.session_id))
        return self._editors[session.session_id]

    def sessions_in(self, root: Path) -> list[Session]:
        """The open sessions of a workspace folder (none before the first one starts)."""
        if self._sessions is None:
            return []
        workspace = self._sessions.workspaces.get(root)
        return list(workspace.sessions.values()) if workspace is not None else []

    async def list_changes(self, params: ListChangesParams) -> dict[str, Any]:
        session = self.get(params.session_id)
        path = changed_path(params.uri)
        listings = await session.changes.listing(self.editor_of(session), params.turn_id, path)
        return listing_to_wire(listings, params.states, self.server.features.encoding)

    async def keep_changes(self, params: ChangesParams) -> dict[str, Any]:
        changes, chosen = self.get(params.session_id).changes, selection(params)
        await changes.prepare_for(chosen)
        return outcome_to_wire(changes.keep(chosen), "kept", "notKept")

    async def undo_changes(self, params: ChangesParams) -> dict[str, Any]:
        session = self.get(params.session_id)
        outcome = await session.undo_changes(selection(params), self.editor_of(session))
        return outcome_to_wire(outcome, "undone", "notUndone")

    # -- lifecycle --------------------------------------------------------------------

    async def shutdown(self) -> None:
        if self._shared:
            await self.disconnect()
            return
        if self._sessions is not None:
            await self._sessions.shutdown()
        for session_id in list(self._publishers):
            self._unfollow(session_id)

    def use_caller(self, caller: Caller) -> None:
        """This client's environment (``tether/clientEnvironment``): the sessions it creates
        from now on work for it (at once: ``initialize`` may come next), and so do those it
        created before; sessions of other clients it merely follows keep theirs."""
        self.client_env = caller
        if self._owned:
            moving = asyncio.ensure_future(self._move_owned(caller))
            self._moving.add(moving)
            moving.add_done_callback(self._moving.discard)

    async def _move_owned(self, caller: Caller) -> None:
        for session_id in list(self._owned):
            session = self.sessions.find(session_id)
            if session is None:
                self._owned.discard(session_id)  # closed since
                continue
            await session.use_caller(caller)

    async def disconnect(self) -> None:
        """This client left the shared daemon: stop following its sessions, and close the
        ones nobody follows any more (their transcripts keep them)."""
        for session_id in list(self._publishers):
            session = self.sessions.find(session_id)
            self._unfollow(session_id)
            if session is not None and not session.events.followed:
                session.cancel()
                await session.close()

    def _log(self, kind: types.MessageType, message: str) -> None:
        with contextlib.suppress(Exception):
            self.server.window_log_message(types.LogMessageParams(type=kind, message=message))
