"""The Editor port over ACP: ``fs/*`` for files, ``session/request_permission`` for questions.

Reads go through ``fs/read_text_file`` when the client offers it, so the agent sees unsaved
buffers. Writes go through ``fs/write_text_file`` when offered, because editors only put
writes they receive that way into their review UI (Zed's Keep/Reject); a client without it
gets the file written on disk. Either way the file on disk holds the new text afterwards:
shell commands (tests, builds) must see what the agent wrote.

Existence and directories are decided on disk: clients answer a missing file with a generic
error, and the tools need ``FileNotFoundError``/``IsADirectoryError`` to react properly.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
from pathlib import Path

import acp.schema as wire
from acp import Client, RequestError

from tether.acp.mapping import View, permission_tool_call
from tether.core.files import check_regular
from tether.editor.disk import read_text_file, write_checked, write_text_atomically
from tether.editor.port import (
    Document,
    PermissionReply,
    PermissionRequest,
    WriteOutcome,
    Written,
)
from tether.errors import ToolError

log = logging.getLogger(__name__)


class AcpEditor:
    def __init__(self, client: Client, caps: wire.ClientCapabilities, view: View) -> None:
        self.client = client
        self.session_id = ""
        """Set once the engine has made the session."""
        self.view = view
        fs = caps.fs
        self.can_read = bool(fs and fs.read_text_file)
        self.can_write = bool(fs and fs.write_text_file)

    # -- reading ----------------------------------------------------------------------

    def reads_from_disk(self, path: Path) -> bool:
        return not self.can_read

    async def read(self, path: Path) -> Document:
        if not self.can_read:
            return Document(path=path, text=await asyncio.to_thread(read_text_file, path))
        await asyncio.to_thread(_check_readable, path)
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as e:
            log.info("fs/read_text_file %s failed (%s); reading the disk", path, e)
            return Document(path=path, text=await asyncio.to_thread(read_text_file, path))
        return Document(path=path, text=response.content, in_editor=True)

    # -- writing ----------------------------------------------------------------------

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        return await write_checked(self, path, new_text, base, label)

    def takes(self, current: Document | None) -> bool:
        return self.can_write

    async def write_buffer(
        self, path: Path, current: Document | None, new_text: str, label: str
    ) -> WriteOutcome:
        try:
            await self.client.write_text_file(
                session_id=self.session_id, path=str(path), content=new_text
            )
        except RequestError as e:
            # Not a Conflict: the user may have rejected the edit in review, and a
            # conflict would make the Edit tool try again.
            raise ToolError(f"The editor did not accept the write to {path}: {e}")
        await asyncio.to_thread(_sync_disk, path, new_text)
        return Written(Document(path=path, text=new_text, in_editor=True))

    # -- permission questions -----------------------------------------------------------

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
        options = [
            wire.PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind)
            for o in request.options()
        ]
        response = await self.client.request_permission(
            session_id=self.session_id,
            tool_call=permission_tool_call(request, self.view),
            options=options,
        )
        outcome = response.outcome
        if isinstance(outcome, wire.DeniedOutcome):
            return request.reply(None)
        return request.reply(outcome.option_id)


def _check_readable(path: Path) -> None:
    """What reading the disk would raise, before the client is asked: a FIFO or a device
    never reaches the editor (its read would hang there)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    check_regular(path, mode)


def _sync_disk(path: Path, text: str) -> None:
    """Clients that keep a write in an unsaved buffer leave the disk behind; catch it up."""
    try:
        if read_text_file(path) == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    log.info("%s differs on disk after fs/write_text_file; writing it", path)
    write_text_atomically(path, text)
