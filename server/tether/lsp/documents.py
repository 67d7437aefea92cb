"""Open documents with LSP's own line ends.

LSP counts lines at ``\\n``, ``\\r\\n`` and ``\\r`` only. pygls's ``TextDocument`` splits with
``str.splitlines``, which also breaks at form feed, vertical tab, U+0085, U+2028 and U+2029:
in a buffer holding one of those, every position after it lands on the wrong line and an
incremental change corrupts the text. ``LspWorkspace`` creates documents that split the LSP
way; ``TetherProtocol`` installs it when the client initializes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lsp_lines(text: str) -> list[str]:
    """``text`` split after each LSP line end, ends kept (``"".join`` gives ``text`` back)."""
    return _LINE.findall(text)


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(lsp_lines(self.source))


class LspWorkspace(Workspace):
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
