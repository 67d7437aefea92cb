# pyright: reportUntypedFunctionDecorator=false, reportUnknownMemberType=false
"""A scripted editor that drives ``tether serve`` over stdio the way an editor would.

It keeps buffers (with unsaved text and versions), applies ``workspace/applyEdit`` to them
in the negotiated position encoding and reports the change with ``didChange``, saves on
``tether/saveDocuments``, answers permission questions from a queue (or a callback) and
records every ``tether/sessionUpdate``. ``tether demo`` and the end-to-end tests use it.

``stale_edits`` chooses how it treats an edit against an old buffer version: "refuse"
answers ``applied: false`` (VS Code), "skip" answers ``applied: true`` and changes nothing
(Neovim 0.11). ``plugin=False`` makes it a plain LSP client that declares nothing of
Tether's (as Helix, eglot or a bare ``vim.lsp.start`` do).

How it reports the edits the daemon makes can be set to what editors were seen doing
(``edit_reports``, ``report_delay_s``, ``ignore_edits``, ``version_step``): the
``didChange`` late, only after the editor's own pending requests are answered, or never;
``applied: true`` for an edit it did not make; versions that jump like Neovim's changedtick.
Whatever the daemon asks that the declared capabilities do not allow is recorded in
``violations`` and refused, as a real client would.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Union, cast

from lsprotocol import converters, types
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.lsp.client import BaseLanguageClient  # pyright: ignore[reportPrivateImportUsage]

from tether.lsp.protocol import tether_converter
from tether.lsp.testing.editor_buffers import Buffer, ChangeOutbox, apply_workspace_edit, path_of
from tether.lsp.testing.editor_options import EditorOptions, EditReports, client_capabilities

__all__ = ["Buffer", "EditReports", "EditorOptions", "FakeEditor", "action_title", "path_of"]

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


class FakeEditor:
    def __init__(
        self,
        options: EditorOptions | None = None,
        client: BaseLanguageClient | None = None,
        *,
        on_update: Callable[[dict[str, Any]], None] | None = None,
        asker: Asker | None = None,
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
        self.asker: Asker | None = asker
        """Answers permission questions (None: the queued ``answers``); a test may swap it."""
        self.on_update: Callable[[dict[str, Any]], None] | None = on_update
        self.before_apply: Callable[[types.ApplyWorkspaceEditParams], None] | None = None
        """Runs when an applyEdit arrives, before the editor looks at it (the user typing
        just then)."""
        self.messages: list[types.ShowMessageParams] = []
        """``window/showMessage`` notifications, in order."""
        self.shown_documents: list[types.ShowDocumentParams] = []
        self.progress_tokens: list[Any] = []
        """Tokens the daemon created with ``window/workDoneProgress/create``."""
        self.violations: list[str] = []
        """Requests the declared capabilities do not allow (refused with -32601)."""
        self.initialize_result: types.InitializeResult | None = None
        self._own_requests = 0
        self.outbox = ChangeOutbox(self.client.text_document_did_change, lambda: self._own_requests)
        self._update_event = asyncio.Event()
        self._message_event = asyncio.Event()
        self._read_code_actions_like_an_editor()
        self._register()

    # -- lifecycle ----------------------------------------------------------------------

    async def start(
        self, command: list[str], workspace_folders: list[Path], env: dict[str, str] | None = None
    ) -> types.InitializeResult:
        await self.client.start_io(command[0], *command[1:], env={**os.environ, **(env or {})})
        caps = client_capabilities(self.options)
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
        self.initialize_result = result
        return result

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
        finally:
            await self.client.stop()

    # -- the user -------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None, language: str = "python") -> None:
        """Open ``path`` in a buffer, optionally with unsaved text."""
        uri = path.as_uri()
        disk = path.read_bytes().decode() if path.exists() else ""  # CRLF stays CRLF
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

    def type(self, path: Path, new_text: str, *, report_after: float = 0.0) -> None:
        """The user changes a buffer (not saved). ``report_after``: the editor debounces
        the ``didChange`` this long (Neovim: 150 ms), so an edit can arrive in between."""
        uri = path.as_uri()
        buffer = self.buffers[uri]
        buffer.change(new_text)
        buffer.version += self.options.version_step
        buffer.dirty = True
        self.outbox.user_change(uri, buffer, report_after)

    def undo(self, path: Path) -> None:
        """The user's undo in the editor: the buffer goes back one step (an applied edit
        or a change of the user's), reported like any change."""
        uri = path.as_uri()
        buffer = self.buffers[uri]
        buffer.text = buffer.undo_stack.pop()
        buffer.version += self.options.version_step
        buffer.dirty = True
        self.outbox.user_change(uri, buffer)

    @property
    def sent_changes(self) -> list[types.DidChangeTextDocumentParams]:
        """Every ``didChange`` sent so far, in order."""
        return self.outbox.sent

    def replace(
        self, path: Path, start: tuple[int, int], end: tuple[int, int], new_text: str
    ) -> None:
        """The user replaces a range (LSP lines and UTF-16 columns), sent as an incremental
        change the way editors send typing."""
        from tether.lsp.documents import lsp_lines

        uri = path.as_uri()
        buffer = self.buffers[uri]
        lines = lsp_lines(buffer.text)

        def offset(line: int, character: int) -> int:
            before = sum(len(x) for x in lines[:line])
            text = lines[line] if line < len(lines) else ""
            units = text.encode("utf-16-le")[: 2 * character].decode("utf-16-le")
            return before + len(units)

        a, b = offset(*start), offset(*end)
        buffer.change(buffer.text[:a] + new_text + buffer.text[b:])
        buffer.version += 1
        buffer.dirty = True
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
            ),
            text=new_text,
        )
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=buffer.version
                ),
                content_changes=[change],
            )
        )

    def text(self, path: Path) -> str:
        return self.buffers[path.as_uri()].text

    async def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        self._own_requests += 1
        try:
            return await asyncio.wait_for(
                self.client.protocol.send_request_async(method, params), timeout
            )
        finally:
            self._own_requests -= 1
            self.outbox.flush()

    async def execute_command(self, command: str, *arguments: Any, timeout: float = 30) -> Any:
        """``workspace/executeCommand``, as a client runs a server command."""
        params = types.ExecuteCommandParams(command=command, arguments=list(arguments))
        return await self.request(types.WORKSPACE_EXECUTE_COMMAND, params, timeout)

    async def code_actions(
        self,
        path: Path,
        start: tuple[int, int],
        end: tuple[int, int] | None = None,
        diagnostics: Sequence[dict[str, Any]] = (),
        only: Sequence[str] | None = None,
    ) -> list[types.CodeAction | types.Command]:
        """``textDocument/codeAction`` for a range (``end`` None: the cursor at ``start``)."""
        end = end or start
        converter = converters.get_converter()
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
            ),
            context=types.CodeActionContext(
                diagnostics=[converter.structure(d, types.Diagnostic) for d in diagnostics],
                only=[types.CodeActionKind(k) for k in only] if only is not None else None,
                trigger_kind=types.CodeActionTriggerKind.Invoked,
            ),
        )
        result = await self.request(types.TEXT_DOCUMENT_CODE_ACTION, params)
        return list(result or [])

    async def wait_for_message(
        self, predicate: Callable[[types.ShowMessageParams], bool], timeout: float = 30
    ) -> types.ShowMessageParams:
        """The first ``window/showMessage`` (seen or to come) that ``predicate`` accepts."""

        async def scan() -> types.ShowMessageParams:
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                event = self._message_event
                await event.wait()

        try:
            return await asyncio.wait_for(scan(), timeout)
        except TimeoutError:
            seen = [m.message for m in self.messages]
            raise AssertionError(f"no such window/showMessage in {timeout} s; seen: {seen}")

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

    def _read_code_actions_like_an_editor(self) -> None:
        """Tell a Command from a CodeAction carrying a command as editors do (by the type of
        ``command``); lsprotocol's own hook takes every action with a command for a Command."""
        converter = self.client.protocol._converter  # pyright: ignore[reportPrivateUsage]

        def structure(obj: Any, _: Any) -> types.Command | types.CodeAction:
            fields = cast(dict[str, Any], obj) if isinstance(obj, dict) else {}
            if isinstance(fields.get("command"), str):
                return converter.structure(obj, types.Command)
            return converter.structure(obj, types.CodeAction)

        converter.register_structure_hook(types.Command | types.CodeAction, structure)
        converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # noqa: UP007

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
            if not self.options.message_requests:
                raise JsonRpcMethodNotFound(
                    f"Method not found: {types.WINDOW_SHOW_MESSAGE_REQUEST}"
                )
            answer = await self._answer({"message": params.message})
            if answer is None:
                return None
            return types.MessageActionItem(title=action_title(answer, params.actions or []))

        @client.feature("tether/saveDocuments")
        def save_documents(ls: Any, params: dict[str, Any]) -> None:
            for uri in params.get("uris", []):
                buffer = self.buffers.get(uri)
                if buffer is not None:
                    path_of(uri).write_text(buffer.text, encoding="utf-8", newline="")
                    buffer.dirty = False
                    self.saved.append(uri)

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(
            ls: Any, params: types.ApplyWorkspaceEditParams
        ) -> types.ApplyWorkspaceEditResult:
            self.applied_edits.append(params)
            if self.before_apply is not None:
                self.before_apply(params)
            return apply_workspace_edit(
                self.buffers, params, self.options, self.outbox, self.client.text_document_did_open
            )

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(ls: Any, params: types.WorkDoneProgressCreateParams) -> None:
            if not self.options.work_done_progress:
                self._violate("window/workDoneProgress/create without window.workDoneProgress")
            self.progress_tokens.append(params.token)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(ls: Any, params: types.ShowMessageParams) -> None:
            self.messages.append(params)
            self._message_event.set()
            self._message_event = asyncio.Event()

        @client.feature(types.WINDOW_SHOW_DOCUMENT)
        def show_document(ls: Any, params: types.ShowDocumentParams) -> types.ShowDocumentResult:
            if not self.options.show_document:
                self._violate("window/showDocument without window.showDocument.support")
            self.shown_documents.append(params)
            return types.ShowDocumentResult(success=True)

        @client.feature(types.PROGRESS)
        def progress(ls: Any, params: Any) -> None:
            self.progress.append(params)

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(ls: Any, params: types.LogMessageParams) -> None:
            sys.stderr.write(f"[daemon log] {params.message}\n")

    def _violate(self, what: str) -> None:
        self.violations.append(what)
        raise JsonRpcMethodNotFound(f"not supported by this client: {what}")

    async def _answer(self, params: dict[str, Any]) -> str | None:
        if self.asker is not None:
            return await self.asker(params)
        if self.answers:
            value = self.answers.pop(0)
            return None if value == "cancel" else value
        return self.default_answer
