# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false, reportUnknownLambdaType=false
"""The daemon's sessions: workspaces by folder, engines by session id, running turns.

Handlers stay thin; this is where a request becomes engine calls and engine updates become
``tether/sessionUpdate`` notifications and ``$/progress``.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from tether.errors import ConfigError, ModelError, SessionError
from tether.lsp.bridge import LspEditor
from tether.lsp.checkpoints import CheckpointingEditor, Checkpoints
from tether.lsp.diagnostics import DiagnosticsStore, diagnostics_source
from tether.lsp.params import (
    CompactParams,
    ListSessionsParams,
    NewSessionParams,
    PromptParams,
    RewindParams,
    SetModeParams,
    StopTaskParams,
)
from tether.lsp.server import TetherServer
from tether.lsp.session_entry import SessionEntry
from tether.lsp.turns import TurnDriver
from tether.transcript.records import ProgressRecord

if TYPE_CHECKING:
    # The engine stack is imported on first use (and warmed in the background after
    # initialize), so that the daemon answers `initialize` quickly.
    from tether.engine.engine import QueryEngine
    from tether.workspace import Workspace

log = logging.getLogger(__name__)


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"not a file URI: {uri}")
    return Path(unquote(parsed.path))


class SessionHub:
    def __init__(self, server: TetherServer) -> None:
        self.server = server
        self.folders: list[Path] = []
        """Workspace roots in the order the editor gave them."""
        self._workspaces: dict[Path, Workspace] = {}
        self.sessions: dict[str, SessionEntry] = {}
        self.diagnostics = DiagnosticsStore()
        self.init_options: dict[str, Any] = {}
        self.turns = TurnDriver(server)

    # -- workspaces -------------------------------------------------------------------

    def add_folder(self, uri: str) -> None:
        root = uri_to_path(uri).resolve()
        if root not in self.folders:
            self.folders.append(root)

    def _workspace(self, root: Path) -> Workspace:
        """The Workspace of a folder, created on first use."""
        workspace = self._workspaces.get(root)
        if workspace is None:
            from tether.workspace import Workspace

            overrides: dict[str, Any] = {}
            if self.init_options.get("model"):
                overrides["model"] = self.init_options["model"]
            if self.init_options.get("permissionMode"):
                overrides["permissions"] = {"defaultMode": self.init_options["permissionMode"]}
            workspace = Workspace(root, overrides=overrides)
            for warning in workspace.loaded.warnings:
                self._log(types.MessageType.Warning, f"settings: {warning}")
            self._workspaces[root] = workspace
        return workspace

    @property
    def workspaces(self) -> list[Workspace]:
        return [self._workspace(root) for root in self.folders]

    def forget_folder(self, uri: str) -> None:
        """Stop offering a folder at once; its sessions close in ``remove_folder``."""
        root = uri_to_path(uri).resolve()
        if root in self.folders:
            self.folders.remove(root)

    async def remove_folder(self, uri: str) -> None:
        root = uri_to_path(uri).resolve()
        self.forget_folder(uri)
        workspace = self._workspaces.pop(root, None)
        if workspace is None:
            return
        for session_id in [s for s, e in self.sessions.items() if e.workspace is workspace]:
            self.sessions.pop(session_id, None)
        await workspace.close()

    def workspace_for(self, uri: str | None) -> Workspace:
        if uri is None:
            if not self.folders:
                raise SessionError("no workspace folder is open")
            return self._workspace(self.folders[0])
        try:
            root = uri_to_path(uri).resolve()
        except ValueError as e:
            raise SessionError(str(e))
        if root not in self.folders:
            raise SessionError(f"{uri} is not a workspace folder of this editor")
        return self._workspace(root)

    def entry(self, session_id: str) -> SessionEntry:
        entry = self.sessions.get(session_id)
        if entry is None:
            raise SessionError(f"unknown sessionId: {session_id}")
        return entry

    # -- sessions ---------------------------------------------------------------------

    def _attach(
        self,
        workspace: Workspace,
        engine: QueryEngine,
        editor: CheckpointingEditor,
        checkpoints: Checkpoints,
    ) -> SessionEntry:
        entry = SessionEntry(workspace, engine, editor, checkpoints)
        editor.on_checkpoint = lambda turn_id, path, text: engine.record(
            ProgressRecord(
                session_id=engine.session_id,
                turn_id=turn_id,
                event="checkpoint",
                data={"turnId": turn_id, "path": str(path), "before": text},
            )
        )
        engine.attachment_sources.append(
            diagnostics_source(
                self.diagnostics, checkpoints.edited, lambda: self.server.features.diagnostics
            )
        )
        session_id = engine.session_id
        engine.on_idle_update = lambda update: self.turns.notify(session_id, "", update)
        engine.on_notification = lambda: self.turns.notification_turn(entry)
        sandbox = workspace.guard.sandbox
        if workspace.loaded.settings.sandbox.enabled and not sandbox.active:
            engine.note(sandbox.describe())
        self.sessions[session_id] = entry
        return entry

    def new_session(self, params: NewSessionParams) -> str:
        workspace = self.workspace_for(params.workspace_folder)
        checkpoints = Checkpoints()
        lsp_editor = LspEditor(self.server, "")
        editor = CheckpointingEditor(lsp_editor, checkpoints)
        try:
            engine = workspace.new_session(
                editor, model=params.model, mode=params.permission_mode, title=params.title
            )
        except ConfigError as e:
            raise SessionError(str(e))
        lsp_editor.session_id = engine.session_id
        self._attach(workspace, engine, editor, checkpoints)
        return engine.session_id

    async def load_session(self, session_id: str, *, recover: bool = False) -> list[dict[str, Any]]:
        entry = self.sessions.get(session_id)
        if entry is None:
            for workspace in self.workspaces:
                if workspace.store.find(session_id) is None:
                    continue
                checkpoints = Checkpoints()
                lsp_editor = LspEditor(self.server, session_id)
                editor = CheckpointingEditor(lsp_editor, checkpoints)
                engine, resumed = await workspace.load_session(session_id, editor, recover=recover)
                checkpoints = _saved_checkpoints(resumed)
                editor.checkpoints = checkpoints
                entry = self._attach(workspace, engine, editor, checkpoints)
                chain = resumed.chain
                break
            else:
                raise SessionError(f"unknown sessionId: {session_id}")
        else:
            from tether.transcript.chain import build_chain
            from tether.transcript.load import read_transcript

            writer = entry.engine.transcript
            chain = build_chain(read_transcript(writer.path).records)[0] if writer else []
        from tether.transcript.replay import history_updates

        pairs = history_updates(
            chain, entry.engine.describe_call, entry.engine.provider.context_window
        )
        return [{"turnId": turn, **update.to_wire()} for turn, update in pairs]

    def rewindable_turns(self, session_id: str) -> list[str]:
        """Turns ``tether/rewind`` can undo (their checkpoints are known), oldest first."""
        return [t.turn_id for t in self.entry(session_id).checkpoints.turns]

    def list_sessions(self, params: ListSessionsParams) -> list[dict[str, Any]]:
        workspaces = (
            [self.workspace_for(params.workspace_folder)]
            if params.workspace_folder
            else self.workspaces
        )
        infos = [i for w in workspaces for i in w.list_sessions()]
        infos.sort(key=lambda i: i.updated_at, reverse=True)
        return [
            {
                "sessionId": i.session_id,
                "title": i.title,
                "workspaceFolder": Path(i.workspace).as_uri() if i.workspace else None,
                "createdAt": i.created_at,
                "updatedAt": i.updated_at,
                "turns": i.turns,
            }
            for i in infos[: params.limit or None]
        ]

    def set_mode(self, params: SetModeParams) -> None:
        self.entry(params.session_id).engine.set_mode(params.mode)

    def cancel(self, session_id: str) -> None:
        self.entry(session_id).engine.cancel()

    # -- prompts ----------------------------------------------------------------------

    async def prompt(self, params: PromptParams) -> dict[str, Any]:
        entry = self.entry(params.session_id)
        engine = entry.engine
        from tether.skills import commands
        from tether.skills.session_prompt import command_turn, expand_for_session

        found = commands.discover(engine.cwd)
        mcp = entry.workspace.mcp_prompts()
        expanded = await expand_for_session(engine, params.prompt, commands=found, mcp=mcp)
        params.prompt = expanded.blocks
        first = params.prompt[0]
        text = getattr(first, "text", "")
        if isinstance(text, str) and (text == "/compact" or text.startswith("/compact ")):
            if engine.busy:
                raise SessionError("cannot compact while a turn is running")
            return await self._compact_as_turn(engine, text.removeprefix("/compact").strip())
        async with command_turn(engine, expanded, entry.workspace.model_provider):
            return await self.turns.prompt(entry, params.prompt, params.work_done_token)

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
            for t in self.entry(session_id).engine.tasks.all()
        ]

    async def stop_task(self, params: StopTaskParams) -> bool:
        tasks = self.entry(params.session_id).engine.tasks
        if tasks.get(params.task_id) is None:
            raise SessionError(f"unknown taskId: {params.task_id}")
        task = await tasks.stop(params.task_id)
        return task is not None and task.status == "killed"

    async def _compact_as_turn(self, engine: QueryEngine, instructions: str) -> dict[str, Any]:
        """``/compact`` typed as a prompt: compaction instead of a model turn."""
        try:
            await engine.compact(instructions)
        except ModelError as e:
            raise SessionError(f"compaction failed: {e}")
        return {"stopReason": "end_turn", "turnId": "", "usage": engine.meter.turn.to_wire()}

    async def compact(self, params: CompactParams) -> dict[str, Any]:
        engine = self.entry(params.session_id).engine
        try:
            update = await engine.compact(params.instructions)  # notifies a compaction update
        except ModelError as e:
            raise SessionError(f"compaction failed: {e}")
        return {"tokensBefore": update.tokens_before, "tokensAfter": update.tokens_after}

    # -- rewind -----------------------------------------------------------------------

    async def rewind(self, params: RewindParams) -> list[str]:
        entry = self.entry(params.session_id)
        engine = entry.engine
        if engine.busy:
            raise SessionError("cannot rewind while a turn is running; cancel it first")
        plan = entry.checkpoints.restore_plan(params.turn_id)
        if plan is None:
            raise SessionError(f"unknown turnId for this session: {params.turn_id}")
        checkpoint, files = plan
        rewound = len(entry.checkpoints.turns) - (entry.checkpoints.find(params.turn_id) or 0)
        restored: list[str] = []
        for path, text in files.items():
            if await entry.editor.restore(path, text):
                restored.append(path.as_uri())
            # The agent's view of the file went back in time too: it must read it again.
            engine.state.files.forget(path)
        del engine.messages[checkpoint.message_index :]
        writer = engine.transcript
        if writer is not None:
            from tether.transcript.records import SystemRecord

            writer.last_uuid = checkpoint.parent_uuid
            writer.append(
                SystemRecord(
                    session_id=engine.session_id,
                    subtype="rewind",
                    data={"turnId": params.turn_id, "restored": restored},
                )
            )
            engine.turns = max(0, engine.turns - rewound)
            writer.append(engine.meta())
            await writer.flush()
        entry.checkpoints.drop_from(params.turn_id)
        return restored

    # -- lifecycle --------------------------------------------------------------------

    async def shutdown(self) -> None:
        for entry in list(self.sessions.values()):
            entry.engine.cancel()
        await self.turns.wait_all()
        for workspace in list(self._workspaces.values()):
            await workspace.close()

    def _log(self, kind: types.MessageType, message: str) -> None:
        with contextlib.suppress(Exception):
            self.server.window_log_message(types.LogMessageParams(type=kind, message=message))


def _saved_checkpoints(resumed: Any) -> Checkpoints:
    """Rewind points of a resumed session, from its transcript."""
    first: dict[str, tuple[int, str | None]] = {}
    for record in resumed.chain:
        if record.turn_id and record.turn_id not in first:
            first[record.turn_id] = (-1, record.parent_uuid)
    for index, turn_id in enumerate(resumed.message_turns):
        if turn_id in first and first[turn_id][0] < 0:
            first[turn_id] = (index, first[turn_id][1])
    turns = [(t, i, parent) for t, (i, parent) in first.items() if i >= 0]
    loaded = resumed.loaded
    saved = [
        (str(p.data.get("turnId")), Path(str(p.data.get("path"))), p.data.get("before"))
        for p in (loaded.progress if loaded is not None else [])
        if p.event == "checkpoint"
    ]
    return Checkpoints.rebuild(turns, saved)
