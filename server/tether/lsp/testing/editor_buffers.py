"""The scripted editor's buffers: applying the daemon's ``workspace/applyEdit`` to them the
way the configured editor would, and its outbox of ``didChange`` notifications, sent in
order, each when it is ready (at once, after a debounce or delay, once the editor's own
requests are answered, or never)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from tether.lsp.testing.editor_options import EditorOptions
from tether.lsp.textedits import Edit, Pos, apply_edits


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


@dataclass
class Buffer:
    text: str
    version: int
    dirty: bool = False
    undo_stack: list[str] = field(default_factory=lambda: list[str]())
    """The text before each change, newest last: one step per ``applyEdit`` (as VS Code
    makes one undo stop of a workspace edit) and per change the user made."""

    def change(self, text: str) -> None:
        self.undo_stack.append(self.text)
        self.text = text


def change_params(uri: str, buffer: Buffer) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=buffer.version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=buffer.text)],
    )


@dataclass
class _Outgoing:
    """A ``didChange`` in the outbox; sent in order, once it is ready."""

    params: types.DidChangeTextDocumentParams
    ready: bool
    after_requests: bool = False


class ChangeOutbox:
    """``didChange`` notifications in the order the buffers changed."""

    def __init__(
        self,
        send: Callable[[types.DidChangeTextDocumentParams], None],
        own_requests: Callable[[], int],
    ) -> None:
        self._send = send
        self._own_requests = own_requests
        self._items: list[_Outgoing] = []
        self.sent: list[types.DidChangeTextDocumentParams] = []

    def user_change(self, uri: str, buffer: Buffer, report_after: float = 0.0) -> None:
        """A change the user made, reported at once or after the editor's debounce."""
        item = _Outgoing(change_params(uri, buffer), ready=report_after <= 0)
        if not item.ready:
            self._release_later(item, report_after)
        self._items.append(item)
        self.flush()

    def edit_change(self, uri: str, buffer: Buffer, options: EditorOptions) -> None:
        """The change an edit of the daemon's made, reported as ``edit_reports`` says."""
        how = options.edit_reports
        if how == "never":
            return
        item = _Outgoing(change_params(uri, buffer), ready=how == "at_once")
        if how == "delayed":
            self._release_later(item, options.report_delay_s)
        elif how == "after_requests":
            item.after_requests = True
        self._items.append(item)
        self.flush()

    def _release_later(self, item: _Outgoing, delay: float) -> None:
        def release() -> None:
            item.ready = True
            self.flush()

        asyncio.get_running_loop().call_later(delay, release)

    def flush(self) -> None:
        while self._items:
            head = self._items[0]
            if head.after_requests and self._own_requests() == 0:
                head.ready = True
            if not head.ready:
                return
            self._items.pop(0)
            self.sent.append(head.params)
            self._send(head.params)


def apply_workspace_edit(
    buffers: dict[str, Buffer],
    params: types.ApplyWorkspaceEditParams,
    options: EditorOptions,
    outbox: ChangeOutbox,
    did_open: Callable[[types.DidOpenTextDocumentParams], None],
) -> types.ApplyWorkspaceEditResult:
    """Apply the edit to ``buffers`` as the configured editor would, and answer."""
    if options.decline_edits:
        return types.ApplyWorkspaceEditResult(
            applied=False, failure_reason="the user declined the edit"
        )
    for change in params.edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            if change.uri not in buffers:
                buffers[change.uri] = Buffer("", 0, dirty=True)
            continue
        if not isinstance(change, types.TextDocumentEdit):
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="unsupported")
        uri = change.text_document.uri
        buffer = buffers.get(uri)
        version = change.text_document.version
        if buffer is None:
            # Not open: the editor opens it in the background, like VS Code does.
            # Line breaks as they are (an editor keeps CRLF files CRLF).
            disk = path_of(uri).read_bytes().decode() if path_of(uri).exists() else ""
            buffer = Buffer(disk, 0)
            buffers[uri] = buffer
        elif version is not None and version != buffer.version:
            if options.stale_edits == "skip":
                return types.ApplyWorkspaceEditResult(applied=True)
            return types.ApplyWorkspaceEditResult(
                applied=False,
                failure_reason=f"require version {version}, you have {buffer.version}",
            )
        if options.ignore_edits:
            return types.ApplyWorkspaceEditResult(applied=True)
        edits = [
            Edit(
                Pos(e.range.start.line, e.range.start.character),
                Pos(e.range.end.line, e.range.end.character),
                e.new_text,
            )
            for e in change.edits
            if isinstance(e, types.TextEdit)
        ]
        buffer.change(apply_edits(buffer.text, edits, options.encoding))
        buffer.dirty = True
        opened = buffer.version == 0
        buffer.version += 1 if opened else options.version_step
        if opened:
            did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id="text", version=buffer.version, text=buffer.text
                    )
                )
            )
        else:
            outbox.edit_change(uri, buffer, options)
    return types.ApplyWorkspaceEditResult(applied=True)
