"""Where transcripts live and how they are listed.

``<data dir>/sessions/<workspace key>/<session id>.jsonl`` with mode 0600, where the data dir
is ``$TETHER_DATA_DIR`` or the platform's user data dir.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs
from pydantic import ValidationError

from tether.core.files import kind_of, open_regular
from tether.transcript.records import MetaRecord, load_record

log = logging.getLogger(__name__)

TAIL_WINDOWS = (16 * 1024, 256 * 1024, None)
"""How much of a file's end to scan for the newest meta record, growing until found."""


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``env``: the caller's variables (the warm daemon serves several); None: this
    process's."""
    override = (os.environ if env is None else env).get("TETHER_DATA_DIR")
    return Path(override) if override else platformdirs.user_data_path("tether", appauthor=False)


def workspace_key(workspace: Path) -> str:
    """A readable, collision-safe folder name for a workspace path."""
    text = str(workspace)
    readable = re.sub(r"[^A-Za-z0-9]", "-", text).strip("-")[-80:] or "root"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{readable}-{digest}"


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    title: str
    workspace: str
    created_at: str
    updated_at: str
    turns: int
    path: Path


class TranscriptStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or data_dir()) / "sessions"

    def session_path(self, workspace: Path, session_id: str) -> Path:
        return self.root / workspace_key(workspace) / f"{session_id}.jsonl"

    def find(self, session_id: str) -> Path | None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", session_id):
            return None
        for path in self.root.glob(f"*/{session_id}.jsonl"):
            if _is_file(path):
                return path
            log.warning("%s is not a regular file; it is no session", path)
        return None

    def list_sessions(
        self, workspace: Path | None = None, limit: int | None = None
    ) -> list[SessionInfo]:
        if workspace is not None:
            files = list((self.root / workspace_key(workspace)).glob("*.jsonl"))
        else:
            files = list(self.root.glob("*/*.jsonl"))
        stamped: list[tuple[float, Path]] = []
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                stamped.append((st.st_mtime, f))
            else:  # a directory (or a FIFO) with a session's name: no session, no reason to fail
                log.warning("%s is %s, not a session file; not listed", f, kind_of(st.st_mode))
        stamped.sort(key=lambda item: item[0], reverse=True)
        out: list[SessionInfo] = []
        for mtime, path in stamped:
            if limit and len(out) >= limit:
                break
            try:
                out.append(read_session_info(path, mtime))
            except OSError as e:  # gone, unreadable, swapped: the others are still listed
                log.warning("cannot read %s: %s", path, e)
        return out


def read_tail_meta(path: Path) -> MetaRecord | None:
    """The newest meta record, reading only the end of the file when possible (meta records
    are re-appended at every turn end, so they are near the tail)."""
    with os.fdopen(open_regular(path), "rb") as f:
        size = f.seek(0, os.SEEK_END)
        for window in TAIL_WINDOWS:
            start = 0 if window is None else max(0, size - window)
            f.seek(start)
            tail = f.read()
            for raw in reversed(tail.split(b"\n")):
                if b'"type":"meta"' not in raw:
                    continue
                try:
                    record = load_record(raw)
                except (ValidationError, ValueError, UnicodeDecodeError):
                    continue
                if isinstance(record, MetaRecord):
                    return record
            if start == 0:
                break
    return None


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def read_session_info(path: Path, mtime: float | None = None) -> SessionInfo:
    meta = read_tail_meta(path)
    stamp = mtime if mtime is not None else path.stat().st_mtime
    updated = dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat(timespec="seconds")
    return SessionInfo(
        session_id=path.stem,
        title=(meta.title if meta and meta.title else "(untitled)"),
        workspace=(meta.workspace or "") if meta else "",
        created_at=(meta.created_at or updated) if meta else updated,
        updated_at=updated.replace("+00:00", "Z"),
        turns=meta.turns if meta else 0,
        path=path,
    )
