"""The pygls protocol subclass: Tether's capabilities in ``initialize``, raw dict params
for custom methods (validated by pydantic in the handlers, so bad params get -32602), and
"server not initialized" for requests that come too early."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import typing
from typing import Any, cast

import attrs
from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.exceptions import (
    JsonRpcInternalError,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from tether import PROTOCOL_VERSION
from tether.lsp.documents import LspWorkspace
from tether.lsp.eager import start_eagerly

log = logging.getLogger(__name__)


def tether_converter() -> Any:
    """lsprotocol's converter, except that messages of methods it does not know keep their
    params (and results) as plain dicts."""
    conv = default_converter()
    # JSON-RPC lets a request or notification leave out ``params``.
    conv.register_structure_hook(
        JsonRPCRequestMessage,
        lambda o, cls: cls(**{"params": None, **o}),  # type: ignore[misc]
    )
    conv.register_structure_hook(
        JsonRPCNotification,
        lambda o, cls: cls(**{"params": None, **o}),  # type: ignore[misc]
    )
    conv.register_structure_hook(JsonRPCResponseMessage, lambda o, cls: cls(**o))  # type: ignore[misc]
    return conv


SENT_METHODS = (
    types.WORKSPACE_APPLY_EDIT,
    types.WINDOW_SHOW_MESSAGE,
    types.WINDOW_SHOW_MESSAGE_REQUEST,
    types.WINDOW_LOG_MESSAGE,
    types.WINDOW_SHOW_DOCUMENT,
    types.WINDOW_WORK_DONE_PROGRESS_CREATE,
    types.PROGRESS,
)
"""The LSP methods the server sends (its answers' types come with them)."""


@functools.cache
def server_converter() -> Any:
    """The servers' one converter: the functions cattrs makes for each message type are
    made once per process (a warm daemon's connections share them), not per server."""
    return tether_converter()


class TetherProtocol(LanguageServerProtocol):
    def __init__(self, server: LanguageServer, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialized = False
        self._methods: dict[int | str, str] = {}
        """The method of each request being handled, for its error message."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)  # type: ignore[misc]
        # Documents split lines the LSP way (pygls splits at form feeds and U+2028 too).
        if self._workspace is not None:  # TetherServer syncs incrementally
            incremental = types.TextDocumentSyncKind.Incremental
            self._workspace = LspWorkspace.like(self._workspace, incremental)
        result.capabilities.experimental = {
            "tether": {
                "protocolVersion": PROTOCOL_VERSION,
                "methods": [
                    "tether/newSession",
                    "tether/prompt",
                    "tether/cancel",
                    "tether/listSessions",
                    "tether/loadSession",
                    "tether/setMode",
                    "tether/rewind",
                    "tether/compact",
                    "tether/listTasks",
                    "tether/stopTask",
                    "tether/listChanges",
                    "tether/keepChanges",
                    "tether/undoChanges",
                ],
                **getattr(self._server, "startup_facts", {}),
            }
        }
        if getattr(getattr(self._server, "features", None), "plugin", False):
            # A Tether plugin has its own commands and views; VS Code's client would also
            # register these command names, which the extension already owns.
            result.capabilities.code_action_provider = None
            result.capabilities.execute_command_provider = None
        self.initialized = True
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        """pygls's, with the changes applied all or none (``documents.LspWorkspace``)."""
        workspace = self.workspace
        if isinstance(workspace, LspWorkspace):
            workspace.apply_changes(params.text_document, params.content_changes)
        else:  # before initialize: pygls's own workspace
            for change in params.content_changes:
                workspace.update_text_document(params.text_document, change)
        features = cast("dict[str, Any]", self.fm.features)  # pyright: ignore[reportUnknownMemberType]
        if (user_handler := features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    def warm_converter(self) -> None:
        """Make the converter's functions for every LSP message this server reads or sends
        now (from the start-up warm-up thread): cattrs makes each one the first time its
        type is met, a few milliseconds in the callback of that first message (the first
        applied edit, the first code action), while the editor waits."""
        features = cast("dict[str, Any]", self.fm.features)  # pyright: ignore[reportUnknownMemberType]
        builtin = cast("dict[str, Any]", self.fm.builtin_features)  # pyright: ignore[reportUnknownMemberType]
        kinds: list[Any] = [JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage]
        # Not initialize's: answered already (and their capabilities are most of the LSP).
        for method in sorted({*features, *builtin, *SENT_METHODS} - {types.INITIALIZE}):
            kinds += [self.get_message_type(method), self.get_result_type(method)]
        converter = self._converter
        for kind in _classes_within(kinds):
            try:
                converter.get_structure_hook(kind)
                converter.get_unstructure_hook(kind)
            except Exception:  # warming is best effort: the first message makes it then
                log.debug("warming the converter for %s failed", kind, exc_info=True)

    eager: frozenset[str] = frozenset({types.TEXT_DOCUMENT_CODE_ACTION})
    """Requests whose handler runs as the request is read, up to its first real wait: the
    editor asks them while the user types, and most are answered without one."""

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        if self._methods.get(msg_id) not in self.eager or not inspect.iscoroutinefunction(handler):
            super()._execute_handler(msg_id, handler, callback, args, kwargs)  # pyright: ignore[reportUnknownMemberType]
            return
        future = start_eagerly(handler(*(args or ()), **(kwargs or {})))
        if future.done():
            callback(future)  # answered now (a done task's callbacks wait for the queue)
            return
        if isinstance(future, asyncio.Task):
            # Cancellable, as pygls's own tasks (which it keeps in the same table).
            self._request_futures[msg_id] = cast("Any", future)
        future.add_done_callback(callback)

    before_initialize: frozenset[str] = frozenset({types.INITIALIZE, types.EXIT})
    """Methods answered before ``initialize``; every other request gets -32002."""

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method is not None and msg_id is not None:
            self._methods[msg_id] = method
        if self._shutdown and method is not None and method != types.EXIT:
            # LSP: "requests after a shutdown request should error with InvalidRequest";
            # notifications are dropped.
            if msg_id is not None:
                error = JsonRpcInvalidRequest(f"{method} arrived after shutdown; only exit is left")
                self._send_response(msg_id, error=error.to_response_error())
            return
        if not self.initialized and method not in self.before_initialize:
            if method is not None and msg_id is not None:
                self._send_response(
                    msg_id,
                    error=JsonRpcServerNotInitialized(
                        f"{method} arrived before initialize"
                    ).to_response_error(),
                )
            return
        super().handle_message(message)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None
    ) -> None:
        method = self._methods.pop(msg_id, None) if msg_id is not None else None
        if error is not None and _unexpected(error):
            error = internal_error(error, method)
        super()._send_response(msg_id, result, error)  # pyright: ignore[reportArgumentType]


def _classes_within(kinds: list[Any]) -> list[type]:
    """The attrs classes of ``kinds`` and of their fields, all the way down. Members of a
    union count too: cattrs picks their functions by the value's class, so making a
    message's function does not make theirs."""
    found: dict[type, None] = {}
    todo = list(kinds)
    while todo:
        kind = todo.pop()
        if kind is None or isinstance(kind, str):
            continue
        todo += typing.get_args(kind)
        if not (isinstance(kind, type) and attrs.has(kind)) or kind in found:
            continue
        found[kind] = None
        try:
            todo += typing.get_type_hints(kind).values()
        except Exception:  # an annotation that does not resolve: its fields are left out
            continue
    return list(found)


def _unexpected(error: ResponseError) -> bool:
    """An exception nobody raised on purpose: pygls attaches its traceback."""
    data: object = error.data
    return (
        error.code == JsonRpcInternalError.CODE
        and isinstance(data, dict)
        and "traceback" in cast("dict[str, object]", data)
    )


def internal_error(error: ResponseError, method: str | None) -> ResponseError:
    """A server fault as a person reads it: what failed and where the details are. The
    traceback pygls attaches stays in the log (pygls logged it with the exception)."""
    what = f"handling {method}" if method else "handling the request"
    detail = error.message if error.message != JsonRpcInternalError.MESSAGE else ""
    message = f"Tether hit an internal error {what}" + (f" ({detail})" if detail else "")
    return ResponseError(
        code=error.code,
        message=f"{message}. This is a bug in Tether; the daemon's log (its stderr) has the "
        "details.",
    )
