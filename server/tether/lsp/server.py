"""TetherServer: the pygls LanguageServer plus what the bridge needs from it (open
documents, version waits, shielded client requests)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from tether import __version__
from tether.lsp.confirm import VersionWatch
from tether.lsp.features import ClientFeatures
from tether.lsp.protocol import TetherProtocol, server_converter

log = logging.getLogger(__name__)
T = TypeVar("T")


def _expected(error: BaseException | None) -> bool:
    """Wire errors we raise on purpose (bad params, cancellation) are not server faults."""
    return isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError)


class _QuietWireErrors(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and _expected(record.exc_info[1]))


logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietWireErrors())


def uri_key(path: Path) -> str:
    """pygls keys open documents by URL-unquoted URI."""
    return unquote(path.as_uri())


class TetherServer(LanguageServer):
    def __init__(self, protocol_cls: type[TetherProtocol] = TetherProtocol) -> None:
        super().__init__(  # pyright: ignore[reportUnknownMemberType]
            "tether",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=protocol_cls,
            converter_factory=server_converter,
        )
        self.features = ClientFeatures()
        self.startup_facts: dict[str, Any] = {}
        """Added to ``capabilities.experimental.tether`` in the initialize result."""
        self.startup_notice: str | None = None
        """Shown to the user as the editor connects (why the warm daemon is not serving it)."""
        self.versions = VersionWatch()
        """Buffer versions the client reports, and the edits waiting for them."""

    def open_document(self, path: Path) -> TextDocument | None:
        try:
            docs = self.workspace.text_documents
        except RuntimeError:
            return None
        return docs.get(uri_key(path)) or docs.get(path.as_uri())

    def document_changed(self, uri: str, version: int | None) -> None:
        self.versions.changed(unquote(uri), version)

    async def wait_for_version(self, path: Path, min_version: int, timeout: float) -> bool:
        doc = self.open_document(path)
        if doc is not None and doc.version is not None and doc.version >= min_version:
            return True
        return await self.versions.wait(uri_key(path), min_version, timeout)

    async def confirm_version(
        self, path: Path, min_version: int, sent_at: float, expected: str
    ) -> bool:
        """Wait for the version an applied edit produced (see ``confirm.VersionWatch``)."""
        doc = self.open_document(path)
        if doc is not None and doc.version is not None and doc.version >= min_version:
            return True

        def shows_edit() -> bool:
            now = self.open_document(path)
            return now is not None and now.source == expected

        return await self.versions.confirm(uri_key(path), min_version, sent_at, shows_edit)

    async def request_shielded(self, request: Awaitable[T]) -> T:
        """Await a server->client request so that cancelling the waiter does not break the
        late reply (pygls #621)."""
        return await asyncio.shield(asyncio.ensure_future(request))

    async def ask_client(self, method: str, params: Any) -> Any:
        """A server->client request the client may drop: if the waiter is cancelled (the
        turn was stopped), the request is withdrawn with ``$/cancelRequest`` so the editor
        can close its dialog."""
        msg_id = f"tether-{uuid.uuid4().hex}"
        request = self.protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            return await self.request_shielded(request)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise

    def report_server_error(self, error: Exception, source: Any) -> None:
        if _expected(error):
            return
        log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=f"tether: {error}")
            )
        except Exception:
            pass
