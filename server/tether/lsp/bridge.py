"""The Editor port over LSP: open buffers, versioned applyEdit, saves and dialogs.

Reads come from the open document (unsaved text) when there is one, else from disk. A
write is one ``workspace/applyEdit`` with minimal edits, versioned against the buffer the
agent read; a stale buffer is a ``Conflict`` (the Edit tool re-reads and re-matches). The
result is confirmed against the client's next ``didChange`` (``confirm``), because some
clients say ``applied: true`` for an edit they skipped and some report it late; when it
cannot be, the outcome is ``Unconfirmed`` and no later edit goes out against the version
the client has left. Afterwards buffer and disk agree: the client saves
(``tether/saveDocuments``) or the daemon writes the same text to disk.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound

from tether.editor.disk import read_text_file, write_checked, write_text_atomically
from tether.editor.port import (
    Conflict,
    Document,
    PermissionOption,
    PermissionReply,
    PermissionRequest,
    Unconfirmed,
    WriteOutcome,
    Written,
    check_base,
    current_document,
)
from tether.lsp.confirm import REFUSED_WAIT_S, Unsettled, judge
from tether.lsp.textedits import minimal_edits_off_loop
from tether.permissions.display import visible

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)

TRUST, DISTRUST = "Trust workspace", "Don't trust"


class LspEditor:
    def __init__(self, server: TetherServer, session_id: str) -> None:
        self.server = server
        self.session_id = session_id
        self.edited: dict[Path, float] = {}
        """Files written since the last diagnostics check, with the time of the write."""
        self._unsettled: dict[Path, Unsettled] = {}
        """Edits the client accepted but never showed (see ``confirm``)."""

    # -- reading --------------------------------------------------------------------------

    def _open_document(self, path: Path) -> Document | None:
        doc = self.server.open_document(path)
        if doc is None:
            self._unsettled.pop(path, None)  # closed: the disk (which we wrote) is the truth
            return None
        unsettled = self._unsettled.get(path)
        if unsettled is not None:
            if doc.version is not None and doc.version > unsettled.version:
                del self._unsettled[path]  # the client has spoken since
            else:
                # Its buffer is past the version we know; its text is probably ours. No
                # version can be named for it, so an edit based on this goes unversioned.
                return Document(path=path, text=unsettled.text, in_editor=True)
        return Document(path=path, text=doc.source, version=doc.version, in_editor=True)

    def reads_from_disk(self, path: Path) -> bool:
        return path not in self._unsettled and self.server.open_document(path) is None

    async def read(self, path: Path) -> Document:
        unsettled = self._unsettled.get(path)
        if unsettled is not None:
            # Give a late didChange the rest of its chance before reading.
            left = unsettled.settle_by - time.monotonic()
            if left > 0:
                await self.server.wait_for_version(path, unsettled.version + 1, left)
        doc = self._open_document(path)
        if doc is not None:
            return doc
        text = await asyncio.to_thread(read_text_file, path)
        return Document(path=path, text=text)

    # -- writing --------------------------------------------------------------------------

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        return await write_checked(self, path, new_text, base, label)

    def takes(self, current: Document | None) -> bool:
        """Whether a buffer can take the edit (and hold the file, if it is new)."""
        features = self.server.features
        return features.apply_edit and (current is not None or features.create_files)

    async def write_buffer(
        self, path: Path, current: Document | None, new_text: str, label: str
    ) -> WriteOutcome:
        outcome = await self._apply(path, current, new_text, label)
        if isinstance(outcome, Conflict):
            return outcome
        await self._sync_disk(
            path, new_text, outcome.document if isinstance(outcome, Written) else outcome.likely
        )
        self.edited[path] = time.monotonic()
        return outcome

    async def write_buffer_only(
        self, path: Path, new_text: str, *, base: Document, label: str
    ) -> WriteOutcome | None:
        """The edit in the client's buffer alone (one versioned ``workspace/applyEdit``):
        the file on disk is not saved, so the user's unsaved text stays unsaved."""
        current, stale = await check_base(self, path, base)
        if stale is not None:
            return stale
        if current is None or not current.in_editor or not self.takes(current):
            return None
        outcome = await self._apply(path, current, new_text, label)
        if not isinstance(outcome, Conflict):
            self.edited[path] = time.monotonic()
        return outcome

    async def _apply(
        self, path: Path, current: Document | None, new_text: str, label: str
    ) -> WriteOutcome:
        uri = path.as_uri()
        old_text = current.text if current is not None else ""
        edits = await minimal_edits_off_loop(old_text, new_text, self.server.features.encoding)
        version = current.version if current is not None and current.in_editor else None
        changes: list[Any] = []
        if current is None:
            changes.append(
                types.CreateFile(
                    uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
                )
            )
        if edits or current is None:
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=[
                        types.TextEdit(
                            range=types.Range(
                                start=types.Position(e.start.line, e.start.character),
                                end=types.Position(e.end.line, e.end.character),
                            ),
                            new_text=e.new_text,
                        )
                        for e in edits
                    ],
                )
            )
        if not changes:
            return Written(current or Document(path=path, text=new_text))
        params = types.ApplyWorkspaceEditParams(
            edit=types.WorkspaceEdit(document_changes=changes), label=label
        )
        # The last version the client reported; an applied edit must produce a later one.
        seen = self.server.open_document(path)
        seen_version = seen.version if seen is not None else None
        try:
            result = await self.server.request_shielded(
                self.server.workspace_apply_edit_async(params)
            )
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("applyEdit failed: %s", e)
            return Conflict(
                await current_document(self, path), f"the editor could not apply the edit: {e}"
            )
        sent_at = time.monotonic()
        if not result.applied:
            if seen_version is not None:
                # Often a race with the user's typing: let the client report where its
                # buffer is before anyone matches again, so nothing is re-sent stale.
                await self.server.wait_for_version(path, seen_version + 1, REFUSED_WAIT_S)
            reason = result.failure_reason or "the editor did not apply the edit"
            return Conflict(await current_document(self, path), reason)
        if seen_version is None:
            # Not open in the editor: no didChange will follow. Trust the answer.
            doc = self._open_document(path)
            return Written(
                doc
                if doc is not None and doc.text == new_text
                else Document(path=path, text=new_text)
            )
        return await self._confirm(path, old_text, new_text, seen_version, sent_at)

    async def _confirm(
        self, path: Path, old_text: str, new_text: str, seen_version: int, sent_at: float
    ) -> WriteOutcome:
        """Trust, then check: wait for the didChange the edit produced and compare its text
        with the expected one (see ``confirm``)."""
        moved = await self.server.confirm_version(path, seen_version + 1, sent_at, new_text)
        doc = self._open_document(path)
        if not moved or doc is None:
            waited = self.server.versions.latency.bound
            self._unsettled[path] = Unsettled(seen_version, new_text, time.monotonic() + waited)
            return Unconfirmed(
                Document(path=path, text=new_text, in_editor=True),
                "the editor accepted the edit but did not report the file's new text within "
                f"{waited:.0f} s",
            )
        verdict = judge(old_text, new_text, doc.text)
        if verdict == "applied":
            # Equal to new_text, or the user typed right after the edit: keep their text.
            return Written(doc)
        if verdict == "skipped":
            return Conflict(
                doc, "the editor reported the edit as applied but its buffer does not contain it"
            )
        return Unconfirmed(
            doc,
            "the editor accepted the edit, then reported text that neither shows nor rules "
            "out the edit",
        )

    async def _sync_disk(self, path: Path, new_text: str, doc: Document) -> None:
        """Buffer and disk agree after every edit."""
        if self.server.features.save_documents:
            try:
                await self.server.request_shielded(
                    self.server.protocol.send_request_async(
                        "tether/saveDocuments", {"uris": [path.as_uri()]}
                    )
                )
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("tether/saveDocuments failed (%s); writing the file myself", e)
        await asyncio.to_thread(
            write_text_atomically, path, doc.text if doc.in_editor else new_text
        )

    # -- permission questions -------------------------------------------------------------

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
        if self.server.features.permission_request:
            return await self._ask_rich(request)
        return await self._ask_fallback(request)

    async def _ask_rich(self, request: PermissionRequest) -> PermissionReply:
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "kind": request.kind,
            "toolCall": {
                "toolCallId": request.tool_call_id,
                "title": request.title,
                "toolKind": request.tool_kind,
                "rawInput": request.raw_input,
                "content": [c.to_wire() for c in request.content],
            },
            "options": [option_to_wire(o) for o in request.options()],
        }
        if request.plan is not None:
            params["plan"] = request.plan
        result = await self.server.ask_client("tether/requestPermission", params)
        outcome = _get(result, "outcome")
        if _get(outcome, "outcome") != "selected":
            return request.reply(None)
        feedback = _get(outcome, "feedback")
        return request.reply(
            str(_get(outcome, "optionId")), feedback if isinstance(feedback, str) else None
        )

    async def trust_workspace(self, root: Path, withheld: list[str]) -> bool:
        """A plain showMessageRequest, which every LSP client can answer."""
        items = "\n".join(f"- {visible(item)}" for item in withheld)
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"Trust the workspace {visible(str(root))}? Its configuration wants to "
            f"run:\n{items}",
            actions=[types.MessageActionItem(title=t) for t in (TRUST, DISTRUST)],
        )
        choice = await self.server.ask_client(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
        return getattr(choice, "title", None) == TRUST

    async def _ask_fallback(self, request: PermissionRequest) -> PermissionReply:
        """``window/showMessageRequest``: the options' names are the actions; no answer
        (``null``) is a rejection, as every client can send it."""
        if request.kind == "plan":
            message = f"Tether has a plan and asks to start on it:\n\n{visible(request.plan or '')}"
        else:
            command = request.raw_input.get("command")
            detail = f"\n\n$ {visible(command)}" if isinstance(command, str) else ""
            message = f"Tether wants to {visible(request.title)}.{detail}"
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[types.MessageActionItem(title=o.name) for o in request.options()],
        )
        try:
            choice = await self.server.ask_client(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
        except JsonRpcMethodNotFound:
            # Some editors (Helix) cannot ask at all: say so where the user looks, once a
            # call, and take it as the "no" it is.
            self.server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"Tether: this editor cannot answer questions, so Tether did not "
                    f"{visible(request.title)}. To let it work here, set "
                    '"permissionMode" (for example "acceptEdits") in the server\'s '
                    "initialization options; see docs/editors.md.",
                )
            )
            return request.reply("reject_once")
        title = getattr(choice, "title", None)
        return request.reply(title if isinstance(title, str) else "reject_once")


def option_to_wire(option: PermissionOption) -> dict[str, str]:
    wire = {"optionId": option.option_id, "name": option.name, "kind": option.kind}
    if option.rule is not None:
        wire["rule"] = option.rule
    return wire


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        mapping: dict[str, Any] = obj  # pyright: ignore[reportUnknownVariableType]
        return mapping.get(key)
    return getattr(obj, key, None)
