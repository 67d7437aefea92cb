"""The one writer of a session file.

The user's message and "tool started" records reach the file before the call returns
(``append_durable``: written through to the OS, so a crash of the daemon at any later moment
cannot lose them; the fsync for power loss follows in the background, off the prompt's
path). Everything else is queued and flushed by a background task within
``FLUSH_DELAY_S``. An exclusive lock on the file keeps a second daemon out.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from pathlib import Path
from typing import IO

from tether.errors import SessionError
from tether.transcript.records import (
    ChainRecord,
    MetaRecord,
    ProgressRecord,
    Record,
    dump_record,
)

FLUSH_DELAY_S = 0.05


class TranscriptWriter:
    def __init__(self, path: Path, session_id: str, *, last_uuid: str | None = None) -> None:
        self.path = path
        self.session_id = session_id
        self.last_uuid = last_uuid
        self._file: IO[bytes] | None = None
        self._pending: list[str] = []
        self._flusher: asyncio.Task[None] | None = None
        self._syncer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        f = os.fdopen(fd, "ab")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise SessionError(
                f"session {self.session_id} is open in another Tether process ({self.path})"
            )
        self._file = f

    def release(self) -> None:
        """Close the file and its lock without flushing (nothing may be pending)."""
        assert not self._pending
        if self._file is not None:
            self._file.close()
            self._file = None

    def chain(self, record: ChainRecord) -> ChainRecord:
        """Link ``record`` after the current head of the conversation chain."""
        if record.parent_uuid is None:
            record.parent_uuid = self.last_uuid
        self.last_uuid = record.uuid
        return record

    def append(self, record: Record) -> None:
        """Queue a record; it reaches the disk within FLUSH_DELAY_S."""
        if not isinstance(record, (MetaRecord, ProgressRecord)):
            self.chain(record)
        self._pending.append(dump_record(record))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_later())

    async def append_durable(self, record: Record) -> None:
        """Write (with everything queued before it) through to the OS before returning."""
        self.append(record)
        await self.flush()
        if self._syncer is None or self._syncer.done():
            self._syncer = asyncio.get_running_loop().create_task(self._sync())

    async def _sync(self) -> None:
        async with self._lock:
            if self._file is not None:
                await asyncio.to_thread(os.fsync, self._file.fileno())

    async def _flush_later(self) -> None:
        await asyncio.sleep(FLUSH_DELAY_S)
        await self.flush()

    async def flush(self, *, sync: bool = False) -> None:
        async with self._lock:
            if not self._pending and not sync:
                return
            lines, self._pending = self._pending, []
            data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
            await asyncio.to_thread(self._write, data, sync)

    def _write(self, data: bytes, sync: bool) -> None:
        if self._file is None:
            self.open()
        assert self._file is not None
        if data:
            self._file.write(data)
            self._file.flush()
        if sync:
            os.fsync(self._file.fileno())

    async def close(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        if self._syncer is not None:
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await self._syncer
        await self.flush(sync=True)
        if self._file is not None:
            self._file.close()
            self._file = None
