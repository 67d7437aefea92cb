"""Opening a session file to continue it: set a torn tail aside, recover from damage on
request (the damaged file is kept, never rewritten in place), take the writer's lock and
append the repairs."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path

from tether.errors import SessionError
from tether.transcript.prefix import line_type
from tether.transcript.resume import ResumedSession, resume
from tether.transcript.writer import TranscriptWriter


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")


def _set_torn_tail_aside(path: Path, good_bytes: int, torn: bytes) -> Path:
    aside = path.with_name(f"{path.name}.torn-{_stamp()}")
    aside.write_bytes(torn)
    os.chmod(aside, 0o600)
    with path.open("r+b") as f:
        f.truncate(good_bytes)
    return aside


def _keep_good_prefix(path: Path, good_bytes: int) -> tuple[Path, str]:
    """Move the damaged file aside and continue in a fresh copy of its good part; returns
    where the whole file went and what of it the copy leaves out, in words."""
    aside = path.with_name(f"{path.name}.damaged-{_stamp()}")
    os.replace(path, aside)
    with aside.open("rb") as src, path.open("wb") as dst:
        dst.write(src.read(good_bytes))
        rest = src.read()
    os.chmod(path, 0o600)
    lines = rest.split(b"\n")
    prompts = sum(1 for line in lines if line_type(line) == b"user")
    count = len(lines) - (1 if lines[-1] == b"" else 0)
    what = f"{count} line(s), with {prompts} readable prompt(s) and what answered them,"
    return aside, what


LOCK_WAIT_S = 2.0


async def _open_locked(writer: TranscriptWriter) -> None:
    """Take the session's lock, waiting a moment for a daemon that is still exiting (an
    editor restarted right after quitting) before saying the session is in use."""
    deadline = asyncio.get_running_loop().time() + LOCK_WAIT_S
    while True:
        try:
            writer.open()
            return
        except SessionError:
            if asyncio.get_running_loop().time() >= deadline:
                raise
            await asyncio.sleep(0.05)


async def open_for_resume(
    path: Path, session_id: str, *, leaf: str | None = None, recover: bool = False
) -> tuple[ResumedSession, TranscriptWriter]:
    try:
        resumed = resume(path, session_id, leaf=leaf, recover=recover)
    except OSError as e:
        raise SessionError(f"cannot read the session file {path}: {e.strerror or e}") from None
    writer = TranscriptWriter(path, session_id, last_uuid=resumed.last_uuid)
    await _open_locked(writer)  # the lock first: a second daemon on this session stops here
    try:
        await _repair(path, resumed, writer, recover)
    except BaseException:
        writer.abandon()  # a load that failed leaves no lock behind
        raise
    return resumed, writer


async def _repair(
    path: Path, resumed: ResumedSession, writer: TranscriptWriter, recover: bool
) -> None:
    """Set damage aside as ``resume`` decided and append its repair records."""
    loaded = resumed.loaded
    assert loaded is not None
    if recover and loaded.good_bytes < path.stat().st_size and loaded.torn_tail is None:
        writer.release()
        aside, what = _keep_good_prefix(path, loaded.good_bytes)
        damage = loaded.damaged
        where = f"line {damage.line} could not be read ({damage.reason}); " if damage else ""
        resumed.repaired.append(
            f"{where}the conversation goes on from the line before it: {what} from there on "
            f"were set aside, and the whole damaged file was kept in {aside.name}"
        )
        writer.open()
    elif loaded.torn_tail is not None:
        _set_torn_tail_aside(path, loaded.good_bytes, loaded.torn_tail)
    for record in resumed.repairs:
        writer.append(record)
    if resumed.repairs:
        await writer.flush()
    resumed.last_uuid = writer.last_uuid
