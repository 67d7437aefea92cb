"""The one writer of a session file.

The user's message and "tool started" records reach the file before the call returns
(``append_durable``: written through to the OS, so a crash of the daemon at any later moment
cannot lose them; the fsync for power loss follows in the background, off the prompt's
path). Everything else is queued and flushed by a background task within
``FLUSH_DELAY_S``. An exclusive lock on the file keeps a second daemon out.

Writes never fail silently: a failed write is retried (``WRITE_ATTEMPTS``), and what could
not be written stays queued (a partial write keeps exactly the unwritten bytes). The error
(``TranscriptWriteError``, naming the file and the cause) is raised by the flush, and a
background flush that failed makes the next ``flush``/``append_durable`` raise it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
from pathlib import Path
from typing import IO

from tether.errors import SessionError, TranscriptWriteError
from tether.transcript.records import (
    ChainRecord,
    MetaRecord,
    ProgressRecord,
    Record,
    dump_record,
)

FLUSH_DELAY_S = 0.05
WRITE_ATTEMPTS = 3
RETRY_DELAY_S = 0.05
log = logging.getLogger(__name__)


class TranscriptWriter:
    def __init__(self, path: Path, session_id: str, *, last_uuid: str | None = None) -> None:
        self.path = path
        self.session_id = session_id
        self.last_uuid = last_uuid
        self._file: IO[bytes] | None = None
        self._pending: list[str] = []
        self._unwritten = b""
        """The tail of a write that failed part-way: written first next time."""
        self.failure: TranscriptWriteError | None = None
        """The last write failure not yet reported by a flush."""
        self._flusher: asyncio.Task[None] | None = None
        self._syncer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Non-blocking: a FIFO put where the file belongs fails at once instead of waiting
        # for a reader (ENXIO); the flag is cleared before anything is written.
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(self.path, flags, 0o600)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        f = os.fdopen(fd, "ab")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(self.path)
            f.close()
            process = "another Tether process" if holder is None else f"Tether process {holder}"
            raise SessionError(
                f"session {self.session_id} is open in {process} ({self.path}); "
                "close it there, or stop that process, then open it again"
            )
        self._file = f

    def release(self) -> None:
        """Close the file and its lock without flushing (nothing may be pending)."""
        assert not self._pending
        if self._file is not None:
            self._file.close()
            self._file = None

    def abandon(self) -> None:
        """Close the file and its lock, dropping what is queued: the session was never
        opened (loading it failed part-way), and nothing of it may stay locked."""
        self._pending.clear()
        self._unwritten = b""
        if self._flusher is not None:
            self._flusher.cancel()
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

    @property
    def pending(self) -> bool:
        """Records are waiting to be written (queued, or kept after a failed write)."""
        return bool(self._pending or self._unwritten)

    async def _flush_later(self) -> None:
        await asyncio.sleep(FLUSH_DELAY_S)
        try:
            await self.flush()
        except TranscriptWriteError as e:
            # Kept for the next flush to raise: the turn's own flush reports it.
            log.error("%s", e)

    async def flush(self, *, sync: bool = False) -> None:
        """Write everything queued; raises ``TranscriptWriteError`` if that fails, keeping
        what was not written."""
        async with self._lock:
            if not self._pending and not self._unwritten and not sync:
                if self.failure is not None:
                    failure, self.failure = self.failure, None
                    raise failure
                return
            lines, self._pending = self._pending, []
            data = self._unwritten + "".join(line + "\n" for line in lines).encode(
                "utf-8", "surrogateescape"
            )
            self._unwritten = b""
            error: OSError | None = None
            for attempt in range(WRITE_ATTEMPTS):
                data, error = await asyncio.to_thread(self._write, data, sync)
                if error is None:
                    break
                if attempt + 1 < WRITE_ATTEMPTS:
                    await asyncio.sleep(RETRY_DELAY_S * (attempt + 1))
            if error is None:
                self.failure = None
                return
            self._unwritten = data
            cause = error.strerror or str(error)
            self.failure = TranscriptWriteError(
                f"could not write the session file {self.path}: {cause} "
                f"({WRITE_ATTEMPTS} attempts; {len(data)} bytes not saved yet)"
            )
            raise self.failure

    def _write(self, data: bytes, sync: bool) -> tuple[bytes, OSError | None]:
        """Write ``data``: (b"", None) when done, else (the unwritten rest, the error), so
        a retry writes no byte twice."""
        try:
            if self._file is None:
                self.open()
            assert self._file is not None
            fd = self._file.fileno()
            view = memoryview(data)
            while view:
                try:
                    written = os.write(fd, view)
                except OSError as e:
                    return bytes(view), e
                view = view[written:]
            if sync:
                os.fsync(fd)
        except OSError as e:
            return data, e
        return b"", None

    async def close(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        if self._syncer is not None:
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await self._syncer
        try:
            await self.flush(sync=True)
        except TranscriptWriteError as e:
            log.error("session closed with records not saved: %s", e)
        if self._file is not None:
            self._file.close()
            self._file = None


def lock_holder(path: Path) -> int | None:
    """The PID holding the ``flock`` on ``path``, from ``/proc/locks`` (Linux; ``None``
    elsewhere or when it cannot be told)."""
    try:
        st = os.stat(path)
        locks = Path("/proc/locks").read_text()
    except OSError:
        return None
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in locks.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1940 fe:00:2148644 0 EOF" ("->" marks a waiter)
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        if fields[5] == where and fields[4].isdigit():
            return int(fields[4])
    return None
