"""How the scripted editor behaves: what it declares at ``initialize`` and how it treats the
daemon's edits (as VS Code, Neovim, eglot or Helix were seen to)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lsprotocol import types

from tether.lsp.textedits import Encoding

EditReports = Literal["at_once", "delayed", "after_requests", "never"]


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
    plugin: bool = True
    """Declare ``capabilities.experimental.tether`` like the shipped clients; False: a plain
    LSP client."""
    show_document: bool = True
    """Declare ``window.showDocument.support``."""
    message_requests: bool = True
    """Answer ``window/showMessageRequest`` (Helix does not: it replies -32601)."""
    code_action_literals: bool = True
    """Declare ``codeActionLiteralSupport`` (else only Commands may be returned)."""
    edit_reports: EditReports = "at_once"
    """When the ``didChange`` for an edit the daemon made is sent: at once, after
    ``report_delay_s``, once no request of the editor's own is pending, or never."""
    report_delay_s: float = 0.0
    ignore_edits: bool = False
    """Answer ``applied: true`` and change nothing (and so report nothing)."""
    decline_edits: bool = False
    """The user says no to every edit (eglot asks first): ``applied: false``."""
    version_step: int = 1
    """How much a buffer's version grows per change (Neovim's changedtick jumps)."""


def client_capabilities(options: EditorOptions) -> types.ClientCapabilities:
    """What the editor declares at ``initialize``."""
    ops = [types.ResourceOperationKind.Create, types.ResourceOperationKind.Delete]
    experimental: dict[str, Any] | None = None
    if options.plugin:
        experimental = {
            "tether": {
                "permissionRequest": options.permission_request,
                "sessionUpdates": options.session_updates,
                "saveDocuments": options.save_documents,
                "diagnostics": options.diagnostics,
            }
        }
    kinds = ["", "quickfix", "refactor", "source"]
    literals = types.ClientCodeActionLiteralOptions(
        code_action_kind=types.ClientCodeActionKindOptions(
            value_set=[types.CodeActionKind(k) for k in kinds]
        )
    )
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=ops if options.create_files else [],
            ),
            workspace_folders=True,
        ),
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=literals if options.code_action_literals else None
            )
        ),
        window=types.WindowClientCapabilities(
            work_done_progress=options.work_done_progress,
            show_message=types.ShowMessageRequestClientCapabilities(),
            show_document=types.ShowDocumentClientCapabilities(support=True)
            if options.show_document
            else None,
        ),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind(options.encoding)]
        ),
        experimental=experimental,
    )
