"""Opening a session file to continue it: set a torn tail aside, recover from damage on
request (the damaged file is kept, never rewritten in place), take the writer's lock and
append the repairs."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import errno
import os
import shutil
from pathlib import Path

from tether.errors import SessionError
from tether.transcript.prefix import line_type
from tether.transcript.resume import ResumedSession, resume
from tether.transcript.writer import TranscriptWriter


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")


def _set_torn_tail_aside(path: Path, good_bytes: int, torn: bytes) -> Path:
    aside = path.with_name(f"{path.name}.torn-{_stamp()}")
    try:
        aside.write_bytes(torn)
    except OSError as e:
        with contextlib.suppress(OSError):
            aside.unlink()
        raise SessionError(_not_recovered(path, len(torn), e, "the torn last line")) from None
    os.chmod(aside, 0o600)
    with path.open("r+b") as f:
        f.truncate(good_bytes)
    return aside


def _keep_good_prefix(path: Path, good_bytes: int) -> tuple[Path, str]:
    """Continue in a fresh copy of the damaged file's good part, the whole file kept aside;
    returns where it went and what of it the copy leaves out, in words. The copy is written
    in full under a temporary name first and only then put in place: when it cannot be
    written (a full disk), the session file is left as it was (``SessionError`` says how
    many bytes are needed)."""
    aside = path.with_name(f"{path.name}.damaged-{_stamp()}")
    partial = path.with_name(f"{path.name}.recovering")
    try:
        with path.open("rb") as src:
            good = src.read(good_bytes)
            rest = src.read()
        with partial.open("wb") as dst:
            os.chmod(partial, 0o600)
            dst.write(good)
            dst.flush()
            os.fsync(dst.fileno())
        _keep_aside(path, aside)
    except OSError as e:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise SessionError(_not_recovered(path, good_bytes, e)) from None
    os.replace(partial, path)
    lines = rest.split(b"\n")
    prompts = sum(1 for line in lines if line_type(line) == b"user")
    count = len(lines) - (1 if lines[-1] == b"" else 0)
    what = f"{count} line(s), with {prompts} readable prompt(s) and what answered them,"
    return aside, what


def _keep_aside(path: Path, aside: Path) -> None:
    """``aside`` names the damaged file too (a second link: the file stays where it is
    until the copy replaces it; renamed where links cannot be made)."""
    try:
        os.link(path, aside)
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        shutil.copyfile(path, aside)


def _not_recovered(path: Path, needed: int, e: OSError, what: str = "the repaired copy") -> str:
    why = (
        f"the disk is full ({needed} bytes are needed for {what})"
        if e.errno in (errno.ENOSPC, errno.EDQUOT)
        else str(e.strerror or e)
    )
    return (
        f"cannot repair {path.name}: {why}. The session file is untouched; "
        "free some space (or fix the cause) and load it again."
    )


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
