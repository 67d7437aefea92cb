"""Thin handlers: validate params, call the hub, encode the result."""

from __future__ import annotations

import logging
import threading
from typing import Any

from lsprotocol import types

from tether.errors import SessionError
from tether.lsp import actions, commands, features
from tether.lsp.hub import SessionHub, uri_to_path
from tether.lsp.params import (
    ChangesParams,
    CompactParams,
    DiagnosticsParams,
    InvalidParamsError,
    ListChangesParams,
    ListSessionsParams,
    LoadSessionParams,
    NewSessionParams,
    PromptParams,
    RewindParams,
    SessionParams,
    SetModeParams,
    StopTaskParams,
    parse_params,
)
from tether.lsp.plain_changes import PlainChanges
from tether.lsp.plain_turns import PlainTurns
from tether.lsp.protocol import TetherProtocol
from tether.lsp.server import TetherServer
from tether.lsp.wire import wire_errors
from tether.protocol.updates import SessionUpdate
from tether.warmup import ENGINE_MODULES, settle_start_up, warm_first_request, warm_imports

log = logging.getLogger(__name__)


CODE_ACTIONS = types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=False)


def wire_updates(updates: list[tuple[str, SessionUpdate]]) -> list[dict[str, Any]]:
    """History entries: each update with its ``turnId``."""
    return [{"turnId": turn, **update.to_wire()} for turn, update in updates]


def register(server: TetherServer, hub: SessionHub, plain: PlainTurns | None = None) -> None:
    turns = plain or PlainTurns(server, hub)
    review = PlainChanges(hub, turns)
    commands.register(server, turns, review)

    @server.feature(types.INITIALIZE)
    def initialize(ls: TetherServer, params: types.InitializeParams) -> None:
        options: Any = params.initialization_options
        hub.init_options = options if isinstance(options, dict) else {}
        ls.features = features.detect(params.capabilities, ls.workspace.position_encoding)
        for folder in params.workspace_folders or []:
            hub.add_folder(folder.uri)
        if not params.workspace_folders and params.root_uri:
            hub.add_folder(params.root_uri)
        ls.startup_facts = features.startup_facts(
            hub.folders[0] if hub.folders else None, hub.init_options, hub.client_env
        )
        if ls.startup_notice:
            # Allowed during initialize (LSP: window/showMessage, logMessage, telemetry).
            notice = types.ShowMessageParams(
                type=types.MessageType.Warning, message=ls.startup_notice
            )
            ls.window_show_message(notice)
        # Warm the engine and the model SDKs off the start-up path, before the first prompt
        # needs them. A daemon thread: an editor that quits at once must not wait for it.
        protocol = ls.protocol if isinstance(ls.protocol, TetherProtocol) else None
        threading.Thread(
            target=_warm_up, args=(protocol,), name="tether-warm-imports", daemon=True
        ).start()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: TetherServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # In the handler itself, not a task: the reader hands over every message that came
        # in at once, so a request right behind this notification may already name the new
        # folder (or the removed one). Only closing a removed folder's sessions waits.
        for folder in params.event.added:
            hub.add_folder(folder.uri)
        removed = [folder.uri for folder in params.event.removed]
        for uri in removed:
            hub.forget_folder(uri)

        async def close_removed() -> None:
            for uri in removed:
                await hub.remove_folder(uri)

        if removed:
            turns.spawn(close_removed())

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TetherServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TetherServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTIONS)
    async def code_action(ls: TetherServer, params: types.CodeActionParams) -> list[actions.Action]:
        uri = params.text_document.uri
        try:
            root = turns.root_of(uri)  # only files of the workspace
            path = uri_to_path(uri).resolve()
        except (ValueError, SessionError):
            return []
        doc = ls.open_document(path)
        if doc is None:
            return []
        lines = doc.source.splitlines()
        first, last = actions.lines_of(params.range)
        changed = await review.actions(root, path, first, last)
        literals = ls.features.code_action_literals
        return actions.code_actions(
            params, lines, doc.language_id, path, literals=literals, review=changed
        )

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TetherServer, *_args: Any) -> None:
        await turns.shutdown()
        await hub.shutdown()

    @server.feature("tether/newSession")
    @wire_errors
    def new_session(ls: TetherServer, params: Any) -> dict[str, Any]:
        session_id = hub.new_session(parse_params(NewSessionParams, params))
        # The mode the settings chose, so a client can show it before anything changes it.
        return {"sessionId": session_id, "mode": hub.get(session_id).mode}

    @server.feature("tether/prompt")
    @wire_errors
    async def prompt(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await hub.prompt(parse_params(PromptParams, params))

    @server.feature("tether/cancel")
    @wire_errors
    def cancel(ls: TetherServer, params: Any) -> None:
        hub.cancel(parse_params(SessionParams, params).session_id)

    @server.feature("tether/listSessions")
    @wire_errors
    async def list_sessions(ls: TetherServer, params: Any) -> dict[str, Any]:
        return {"sessions": await hub.list_sessions(parse_params(ListSessionsParams, params))}

    @server.feature("tether/loadSession")
    @wire_errors
    async def load_session(ls: TetherServer, params: Any) -> dict[str, Any]:
        parsed = parse_params(LoadSessionParams, params)
        history = await hub.load_session(parsed.session_id, recover=parsed.recover)
        session = hub.followed(parsed.session_id)
        return {
            "sessionId": parsed.session_id,
            "history": wire_updates(history.updates),
            "rewound": [
                {
                    "at": r.at,
                    "turnId": r.turn_id,
                    "restored": r.restored,
                    "history": wire_updates(r.updates),
                }
                for r in history.rewound
            ],
            "rewindableTurns": session.rewindable_turns,
            "title": session.title,
            "turns": session.turns,
            "usage": session.usage.to_wire(),
            "mode": session.mode,
        }

    @server.feature("tether/setMode")
    @wire_errors
    def set_mode(ls: TetherServer, params: Any) -> None:
        hub.set_mode(parse_params(SetModeParams, params))

    @server.feature("tether/rewind")
    @wire_errors
    async def rewind(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await hub.rewind(parse_params(RewindParams, params))

    @server.feature("tether/listChanges")
    @wire_errors
    async def list_changes(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await hub.list_changes(parse_params(ListChangesParams, params))

    @server.feature("tether/keepChanges")
    @wire_errors
    async def keep_changes(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await hub.keep_changes(parse_params(ChangesParams, params))

    @server.feature("tether/undoChanges")
    @wire_errors
    async def undo_changes(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await hub.undo_changes(parse_params(ChangesParams, params))

    @server.feature("tether/listTasks")
    @wire_errors
    def list_tasks(ls: TetherServer, params: Any) -> dict[str, Any]:
        return {"tasks": hub.list_tasks(parse_params(SessionParams, params).session_id)}

    @server.feature("tether/stopTask")
    @wire_errors
    async def stop_task(ls: TetherServer, params: Any) -> dict[str, Any]:
        return {"stopped": await hub.stop_task(parse_params(StopTaskParams, params))}

    @server.feature("tether/compact")
    @wire_errors
    async def compact(ls: TetherServer, params: Any) -> dict[str, Any]:
        return await hub.compact(parse_params(CompactParams, params))

    @server.feature("tether/diagnostics")
    def diagnostics(ls: TetherServer, params: Any) -> None:
        try:
            parsed = parse_params(DiagnosticsParams, params)
        except InvalidParamsError as e:
            log.warning("tether/diagnostics: %s", e)
            return
        hub.diagnostics.publish(parsed.uri, parsed.diagnostics)


def _warm_up(protocol: TetherProtocol | None) -> None:
    warm_imports(ENGINE_MODULES)
    if protocol is not None:
        protocol.warm_converter()  # the editor's first messages first
    warm_first_request()
    settle_start_up()
