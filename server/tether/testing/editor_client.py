# pyright: reportUntypedFunctionDecorator=false, reportUnknownMemberType=false
"""A scripted editor that drives ``tether serve`` over stdio the way an editor would.

It keeps buffers (with unsaved text and versions), applies ``workspace/applyEdit`` to them
in the negotiated position encoding and reports the change with ``didChange``, saves on
``tether/saveDocuments``, answers permission questions from a queue (or a callback) and
records every ``tether/sessionUpdate``. ``tether demo`` and the end-to-end tests use it.

``stale_edits`` chooses how it treats an edit against an old buffer version: "refuse"
answers ``applied: false`` (VS Code), "skip" answers ``applied: true`` and changes nothing
(Neovim 0.11).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient  # pyright: ignore[reportPrivateImportUsage]

from tether.lsp.protocol import tether_converter
from tether.lsp.textedits import Edit, Encoding, Pos, apply_edits

PermissionChoice = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
Asker = Callable[[dict[str, Any]], Awaitable[str | None]]

TITLE_PREFIXES = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}
"""How the daemon titles each answer kind in ``window/showMessageRequest`` ("always" titles
name the rule they save)."""


def action_title(answer: str, actions: Sequence[types.MessageActionItem]) -> str:
    """The action a user picks for an answer given as an option kind (or as a title)."""
    prefix = TITLE_PREFIXES.get(answer)
    if prefix is None:
        return answer
    return next((a.title for a in actions if a.title.startswith(prefix)), prefix)


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


@dataclass
class Buffer:
    text: str
    version: int
    dirty: bool = False


@dataclass
class EditorOptions:
    permission_request: bool = True
    save_documents: bool = True
    diagnostics: bool = False
    session_updates: bool = True
    encoding: Encoding = "utf-16"
    stale_edits: Literal["refuse", "skip"] = "refuse"
    create_files: bool = True
    work_done_progress: bool = True
    init_options: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


class FakeEditor:
    def __init__(
        self, options: EditorOptions | None = None, client: BaseLanguageClient | None = None
    ) -> None:
        self.options = options or EditorOptions()
        self.client = client or BaseLanguageClient(
            "fake-editor", "1", converter_factory=tether_converter
        )
        self.buffers: dict[str, Buffer] = {}
        self.updates: list[dict[str, Any]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.message_requests: list[types.ShowMessageRequestParams] = []
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        self.saved: list[str] = []
        self.progress: list[Any] = []
        self.answers: list[str] = []
        """Queued permission answers (option ids / titles); empty queue: ``default_answer``."""
        self.feedback: list[str] = []
        """Feedback sent with the next rich permission answers, in order (plans)."""
        self.default_answer: str = "allow_once"
        self.asker: Asker | None = None
        self.on_update: Callable[[dict[str, Any]], None] | None = None
        self._update_event = asyncio.Event()
        self._register()

    # -- lifecycle ----------------------------------------------------------------------

    async def start(
        self, command: list[str], workspace_folders: list[Path], env: dict[str, str] | None = None
    ) -> types.InitializeResult:
        await self.client.start_io(command[0], *command[1:], env={**os.environ, **(env or {})})
        caps = self._capabilities()
        if hasattr(self.client, "capabilities"):
            # pytest-lsp's client checks the server's messages against these.
            self.client.capabilities = caps  # pyright: ignore[reportAttributeAccessIssue]
        folders = [types.WorkspaceFolder(uri=p.as_uri(), name=p.name) for p in workspace_folders]
        result = await self.client.initialize_async(
            types.InitializeParams(
                process_id=os.getpid(),
                capabilities=caps,
                root_uri=folders[0].uri if folders else None,
                workspace_folders=folders,
                initialization_options=self.options.init_options,
            )
        )
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
        finally:
            await self.client.stop()

    def _capabilities(self) -> types.ClientCapabilities:
        ops = [types.ResourceOperationKind.Create, types.ResourceOperationKind.Delete]
        return types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=True,
                    resource_operations=ops if self.options.create_files else [],
                ),
                workspace_folders=True,
            ),
            window=types.WindowClientCapabilities(
                work_done_progress=self.options.work_done_progress
            ),
            general=types.GeneralClientCapabilities(
                position_encodings=[types.PositionEncodingKind(self.options.encoding)]
            ),
            experimental={
                "tether": {
                    "permissionRequest": self.options.permission_request,
                    "sessionUpdates": self.options.session_updates,
                    "saveDocuments": self.options.save_documents,
                    "diagnostics": self.options.diagnostics,
                }
            },
        )

    # -- the user -------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None, language: str = "python") -> None:
        """Open ``path`` in a buffer, optionally with unsaved text."""
        uri = path.as_uri()
        disk = path.read_text(encoding="utf-8") if path.exists() else ""
        buffer = Buffer(
            text if text is not None else disk, 1, dirty=text is not None and text != disk
        )
        self.buffers[uri] = buffer
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language, version=buffer.version, text=buffer.text
                )
            )
        )

    def type(self, path: Path, new_text: str) -> None:
        """The user changes a buffer (not saved)."""
        uri = path.as_uri()
        buffer = self.buffers[uri]
        buffer.text = new_text
        buffer.version += 1
        buffer.dirty = True
        self._did_change(uri, buffer)

    def text(self, path: Path) -> str:
        return self.buffers[path.as_uri()].text

    async def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), timeout
        )

    async def new_session(self, **params: Any) -> str:
        result = await self.request("tether/newSession", params)
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str, timeout: float = 60, **extra: Any) -> Any:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}], **extra}
        return await self.request("tether/prompt", params, timeout)

    def updates_of(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            u["update"]
            for u in self.updates
            if u["sessionId"] == session_id and (kind is None or u["update"]["kind"] == kind)
        ]

    async def wait_for_update(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10
    ) -> dict[str, Any]:
        async def scan() -> dict[str, Any]:
            seen = 0
            while True:
                for item in self.updates[seen:]:
                    if predicate(item):
                        return item
                seen = len(self.updates)
                event = self._update_event
                await event.wait()

        return await asyncio.wait_for(scan(), timeout)

    # -- server -> client -----------------------------------------------------------------

    def _did_change(self, uri: str, buffer: Buffer) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=buffer.text)],
            )
        )

    def _register(self) -> None:
        client = self.client

        @client.feature("tether/sessionUpdate")
        def session_update(ls: Any, params: dict[str, Any]) -> None:
            self.updates.append(params)
            if self.on_update is not None:
                self.on_update(params)
            self._update_event.set()
            self._update_event = asyncio.Event()

        @client.feature("tether/requestPermission")
        async def request_permission(ls: Any, params: dict[str, Any]) -> dict[str, Any]:
            self.permission_requests.append(params)
            answer = await self._answer(params)
            if answer is None:
                return {"outcome": {"outcome": "cancelled"}}
            outcome: dict[str, Any] = {"outcome": "selected", "optionId": answer}
            if self.feedback:
                outcome["feedback"] = self.feedback.pop(0)
            return {"outcome": outcome}

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def show_message_request(
            ls: Any, params: types.ShowMessageRequestParams
        ) -> types.MessageActionItem | None:
            self.message_requests.append(params)
            answer = await self._answer({"message": params.message})
            if answer is None:
                return None
            return types.MessageActionItem(title=action_title(answer, params.actions or []))

        @client.feature("tether/saveDocuments")
        def save_documents(ls: Any, params: dict[str, Any]) -> None:
            for uri in params.get("uris", []):
                buffer = self.buffers.get(uri)
                if buffer is not None:
                    path_of(uri).write_text(buffer.text, encoding="utf-8")
                    buffer.dirty = False
                    self.saved.append(uri)

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(
            ls: Any, params: types.ApplyWorkspaceEditParams
        ) -> types.ApplyWorkspaceEditResult:
            self.applied_edits.append(params)
            return self._apply(params)

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(ls: Any, params: Any) -> None:
            return None

        @client.feature(types.PROGRESS)
        def progress(ls: Any, params: Any) -> None:
            self.progress.append(params)

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(ls: Any, params: types.LogMessageParams) -> None:
            sys.stderr.write(f"[daemon log] {params.message}\n")

    async def _answer(self, params: dict[str, Any]) -> str | None:
        if self.asker is not None:
            return await self.asker(params)
        if self.answers:
            value = self.answers.pop(0)
            return None if value == "cancel" else value
        return self.default_answer

    def _apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        changes = params.edit.document_changes or []
        for change in changes:
            if isinstance(change, types.CreateFile):
                if change.uri not in self.buffers:
                    self.buffers[change.uri] = Buffer("", 0, dirty=True)
                continue
            if not isinstance(change, types.TextDocumentEdit):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="unsupported")
            uri = change.text_document.uri
            buffer = self.buffers.get(uri)
            version = change.text_document.version
            if buffer is None:
                # Not open: the editor opens it in the background, like VS Code does.
                disk = path_of(uri).read_text(encoding="utf-8") if path_of(uri).exists() else ""
                buffer = Buffer(disk, 0)
                self.buffers[uri] = buffer
            elif version is not None and version != buffer.version:
                if self.options.stale_edits == "skip":
                    return types.ApplyWorkspaceEditResult(applied=True)
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="the document version is stale"
                )
            edits = [
                Edit(
                    Pos(e.range.start.line, e.range.start.character),
                    Pos(e.range.end.line, e.range.end.character),
                    e.new_text,
                )
                for e in change.edits
                if isinstance(e, types.TextEdit)
            ]
            buffer.text = apply_edits(buffer.text, edits, self.options.encoding)
            buffer.dirty = True
            opened = buffer.version == 0
            buffer.version += 1
            if opened:
                self.client.text_document_did_open(
                    types.DidOpenTextDocumentParams(
                        text_document=types.TextDocumentItem(
                            uri=uri, language_id="text", version=buffer.version, text=buffer.text
                        )
                    )
                )
            else:
                self._did_change(uri, buffer)
        return types.ApplyWorkspaceEditResult(applied=True)
