"""An Editor backed by the filesystem only (headless runs, tests, clients without buffers)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from tether.core.files import MAX_TEXT_FILE_BYTES
from tether.editor.port import (
    Document,
    Editor,
    PermissionAnswer,
    PermissionReply,
    PermissionRequest,
    WriteOutcome,
    Written,
    check_base,
    conflict,
    reply_of,
)
from tether.tools.paths import read_bytes_no_symlinks, write_text_no_symlinks

Asker = Callable[[PermissionRequest], Awaitable[PermissionAnswer | PermissionReply]]
"""Answers a question: a full reply, or a bare answer kind (``reply_of`` maps it)."""
TrustAsker = Callable[[Path, list[str]], Awaitable[bool]]


async def _deny(_request: PermissionRequest) -> PermissionAnswer:
    return "reject_once"


async def _distrust(_root: Path, _withheld: list[str]) -> bool:
    return False


def read_text_file(path: Path) -> str:
    """Read a text file as the editor would: UTF-8 (BOM dropped), newlines kept as they are.
    No component of the (canonical) path may be a symlink: a swap between the workspace
    check and this open cannot lead outside. A file over ``MAX_TEXT_FILE_BYTES`` is refused
    (``FileTooLargeError``) before it is read."""
    return read_bytes_no_symlinks(path, max_bytes=MAX_TEXT_FILE_BYTES).decode("utf-8-sig")


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file and rename, keeping the file's mode and
    following no symlink on the way."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_no_symlinks(path, text)


async def write_on_disk(path: Path, text: str) -> Written:
    """For front doors with no buffer to hold the text: the file itself."""
    await asyncio.to_thread(write_text_atomically, path, text)
    return Written(Document(path=path, text=text))


class BufferWriter(Editor, Protocol):
    """A front door whose client holds buffers: it says whether one can take a write and
    makes it there."""

    def takes(self, current: Document | None) -> bool: ...

    async def write_buffer(
        self, path: Path, current: Document | None, new_text: str, label: str
    ) -> WriteOutcome: ...


async def write_checked(
    editor: BufferWriter, path: Path, new_text: str, base: Document | None, label: str
) -> WriteOutcome:
    """A front door's write: refused when the text is no longer ``base``; into the client's
    buffer when one ``takes`` the file as it is now, else on disk."""
    current, stale = await check_base(editor, path, base)
    if stale is not None:
        return stale
    if not editor.takes(current):
        return await write_on_disk(path, new_text)
    return await editor.write_buffer(path, current, new_text, label)


class DiskEditor:
    """Reads and writes files directly; permission questions go to ``asker`` and the trust
    question to ``trust_asker`` (both say no by default)."""

    def __init__(self, asker: Asker | None = None, trust_asker: TrustAsker | None = None) -> None:
        self._asker: Asker = asker or _deny
        self._trust_asker: TrustAsker = trust_asker or _distrust

    async def read(self, path: Path) -> Document:
        text = await asyncio.to_thread(read_text_file, path)
        return Document(path=path, text=text)

    def reads_from_disk(self, path: Path) -> bool:
        return True

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        def _write() -> WriteOutcome:
            try:
                current: Document | None = Document(path=path, text=read_text_file(path))
            except FileNotFoundError:
                current = None
            stale = conflict(base, current)
            if stale is not None:
                return stale
            write_text_atomically(path, new_text)
            return Written(Document(path=path, text=new_text))

        return await asyncio.to_thread(_write)

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
        answer = await self._asker(request)
        return answer if isinstance(answer, PermissionReply) else reply_of(request, answer)

    async def trust_workspace(self, root: Path, withheld: list[str]) -> bool:
        return await self._trust_asker(root, withheld)
