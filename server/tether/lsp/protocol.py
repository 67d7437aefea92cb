"""The pygls protocol subclass: Tether's capabilities in ``initialize``, raw dict params
for custom methods (validated by pydantic in the handlers, so bad params get -32602), and
"server not initialized" for requests that come too early."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from tether import PROTOCOL_VERSION
from tether.lsp.documents import LspWorkspace


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


class TetherProtocol(LanguageServerProtocol):
    def __init__(self, server: LanguageServer, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialized = False

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

    before_initialize: frozenset[str] = frozenset({types.INITIALIZE, types.EXIT})
    """Methods answered before ``initialize``; every other request gets -32002."""

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if not self.initialized and method not in self.before_initialize:
            msg_id = getattr(message, "id", None)
            if method is not None and msg_id is not None:
                self._send_response(
                    msg_id,
                    error=JsonRpcServerNotInitialized(
                        f"{method} arrived before initialize"
                    ).to_response_error(),
                )
            return
        super().handle_message(message)
