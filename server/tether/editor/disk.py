"""An Editor backed by the filesystem only (headless runs, tests, clients without buffers)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from tether.editor.port import (
    Conflict,
    Document,
    PermissionAnswer,
    PermissionRequest,
    WriteOutcome,
    Written,
)

Asker = Callable[[PermissionRequest], Awaitable[PermissionAnswer]]
TrustAsker = Callable[[Path, list[str]], Awaitable[bool]]


async def _deny(_request: PermissionRequest) -> PermissionAnswer:
    return "reject_once"


async def _distrust(_root: Path, _withheld: list[str]) -> bool:
    return False


def read_text_file(path: Path) -> str:
    """Read a text file as the editor would: UTF-8 (BOM dropped), newlines kept as they are."""
    with path.open("r", encoding="utf-8-sig", newline="") as f:
        return f.read()


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file and rename, keeping the file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode: int | None = None
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tether-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class DiskEditor:
    """Reads and writes files directly; permission questions go to ``asker`` and the trust
    question to ``trust_asker`` (both say no by default)."""

    def __init__(self, asker: Asker | None = None, trust_asker: TrustAsker | None = None) -> None:
        self._asker: Asker = asker or _deny
        self._trust_asker: TrustAsker = trust_asker or _distrust

    async def read(self, path: Path) -> Document:
        text = await asyncio.to_thread(read_text_file, path)
        return Document(path=path, text=text)

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        def _write() -> WriteOutcome:
            try:
                current = read_text_file(path)
            except FileNotFoundError:
                current = None
            if base is None and current is not None:
                return Conflict(Document(path=path, text=current), "the file was created meanwhile")
            if base is not None and current != base.text:
                now = Document(path=path, text=current) if current is not None else None
                return Conflict(now, "the file changed on disk since it was read")
            write_text_atomically(path, new_text)
            return Written(Document(path=path, text=new_text))

        return await asyncio.to_thread(_write)

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        return await self._asker(request)

    async def trust_workspace(self, root: Path, withheld: list[str]) -> bool:
        return await self._trust_asker(root, withheld)
