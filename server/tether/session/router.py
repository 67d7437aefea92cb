"""Several clients on one session: which client's editor a session uses.

A session of the warm daemon may be followed by several clients at once (an editor, a
terminal attached with ``tether attach``). Reads and writes go through the editor of the
client that started the running turn (its open buffers are the ones the user works in);
a permission question goes to that client, and if it has gone, to the next attached one —
never lost, never answered twice. With one client this is just that client's editor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from tether.editor.port import (
    Document,
    Editor,
    PermissionReply,
    PermissionRequest,
    WriteOutcome,
)
from tether.errors import SessionError

log = logging.getLogger(__name__)


class ClientGone(Exception):
    """The client an editor talks to has disconnected (its questions go elsewhere)."""


class EditorRouter:
    def __init__(self, first: Editor) -> None:
        self._editors: list[Editor] = [first]
        self._driver: Editor | None = None

    @property
    def editors(self) -> list[Editor]:
        return list(self._editors)

    def attach(self, editor: Editor) -> Callable[[], None]:
        """Add a client's editor; returns the function that removes it."""
        if editor not in self._editors:
            self._editors.append(editor)

        def detach() -> None:
            if editor in self._editors:
                self._editors.remove(editor)
            if self._driver is editor:
                self._driver = None

        return detach

    def drive(self, editor: Editor | None) -> None:
        """The client whose request started the current turn (None: the session itself)."""
        self._driver = editor if editor in self._editors else None

    @property
    def inner(self) -> Editor:
        """The editor in use now (optional parts like the trust dialog are looked up here)."""
        return self._current()

    def _current(self) -> Editor:
        if self._driver is not None:
            return self._driver
        if not self._editors:
            raise SessionError("no client is attached to this session")
        return self._editors[0]

    async def read(self, path: Path) -> Document:
        return await self._current().read(path)

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        return await self._current().write(path, new_text, base=base, label=label)

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
        """Ask the driving client; when it has gone, the next attached one."""
        tried: list[Editor] = []
        while True:
            candidates = [e for e in ([self._driver, *self._editors]) if e and e not in tried]
            if not candidates:
                raise SessionError("no attached client can answer the question")
            editor = candidates[0]
            tried.append(editor)
            try:
                return await editor.ask_permission(request)
            except ClientGone:
                log.info("a client left while asked %s; asking the next", request.title)
                if self._driver is editor:
                    self._driver = None
