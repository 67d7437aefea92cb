"""Open documents with LSP's own line ends.

LSP counts lines at ``\\n``, ``\\r\\n`` and ``\\r`` only. pygls's ``TextDocument`` splits with
``str.splitlines``, which also breaks at form feed, vertical tab, U+0085, U+2028 and U+2029:
in a buffer holding one of those, every position after it lands on the wrong line and an
incremental change corrupts the text. ``LspWorkspace`` creates documents that split the LSP
way; ``TetherProtocol`` installs it when the client initializes.

The daemon's copy of a buffer follows the editor exactly or not at all. A ``didChange`` that
cannot be applied as sent (a range whose end comes before its start, a start past the end
of the text, a version lower than the copy's) would make the copy differ from the buffer
without anyone knowing: the copy is dropped instead, and until the editor opens the
document again the agent reads the file from disk. A ``didChange`` for a document that was
never opened (or was dropped) changes nothing. Each is logged once per document.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

log = logging.getLogger(__name__)

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lsp_lines(text: str) -> list[str]:
    """``text`` split after each LSP line end, ends kept (``"".join`` gives ``text`` back)."""
    return _LINE.findall(text)


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(lsp_lines(self.source))


def line_count(text: str) -> int:
    """``len(lsp_lines(text))``, counted without splitting."""
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    return breaks + (1 if text and not text.endswith(("\n", "\r")) else 0)


def change_problem(doc: TextDocument, change: types.TextDocumentContentChangeEvent) -> str | None:
    """Why ``change`` cannot be applied to ``doc`` as sent, or None."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return None
    start, end = change.range.start, change.range.end
    if (start.line, start.character) > (end.line, end.character):
        return (
            f"a change's range ends ({end.line}:{end.character}) before it starts "
            f"({start.line}:{start.character})"
        )
    lines = line_count(doc.source)
    if start.line > lines:
        return f"a change starts on line {start.line}, past the end of the text ({lines} lines)"
    return None


class LspWorkspace(Workspace):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refused: set[str] = set()
        """Documents whose changes are ignored (already logged) until opened again."""

    def put_text_document(
        self, text_document: types.TextDocumentItem, notebook_uri: str | None = None
    ) -> None:
        self._refused.discard(unquote(text_document.uri))
        super().put_text_document(text_document, notebook_uri)

    def apply_changes(
        self,
        text_doc: types.VersionedTextDocumentIdentifier,
        changes: Sequence[types.TextDocumentContentChangeEvent],
    ) -> None:
        """One ``didChange``: all of its changes, or (with a log line) none."""
        key = unquote(text_doc.uri)
        doc = self._text_documents.get(key)
        if doc is None:
            if key not in self._refused:
                self._refused.add(key)
                log.warning(
                    "didChange for %s, which is not open: ignored (it is read from disk until "
                    "the editor opens it)",
                    text_doc.uri,
                )
            return
        problem = None
        if doc.version is not None and text_doc.version < doc.version:
            problem = f"its version {text_doc.version} is lower than the {doc.version} already seen"
        for change in changes:
            problem = problem or change_problem(doc, change)
            if problem is not None:
                break
            doc.apply_change(change)
        if problem is not None:
            self._refused.add(key)
            self.remove_text_document(text_doc.uri)
            log.warning(
                "didChange for %s refused: %s. The daemon's copy of it is dropped; the file "
                "is read from disk until the editor opens it again",
                text_doc.uri,
                problem,
            )
            return
        doc.version = text_doc.version

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )

    @classmethod
    def like(cls, other: Workspace, sync_kind: Any) -> LspWorkspace:
        """The same roots, folders and position encoding as ``other`` (which holds no
        documents yet: it is replaced right after ``initialize``)."""
        return cls(other.root_uri, sync_kind, list(other.folders.values()), other.position_encoding)
