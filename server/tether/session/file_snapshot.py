"""What a shell command changed in the workspace, and the text those files had before it.

Before a command that may change files, ``WorkspaceSnapshots.take`` lists the workspace's
non-ignored files (``rg --files``: fast, and it respects ``.gitignore``; the same walk in
Python without ripgrep) and stats them; ``changes`` lists and stats them again after the
command and compares. The text of a file before the command comes from a cache of the
workspace's text files, kept across commands and refreshed only for files whose stat
changed: reading the tree costs once, each later command costs a listing and a stat per
file (see ``bench/rewind.py``). The cache is bounded: files over ``MAX_FILE_BYTES``,
binary files and files past ``MAX_CACHE_BYTES`` (compressed) are not kept, and a change to
one of them is reported with the reason it cannot be undone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from tether.core.files import open_regular
from tether.permissions.controlplane import PROTECTED_NAMES
from tether.tools.glob import walk_files

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 512 * 1024
MAX_CACHE_BYTES = 64 * 1024 * 1024
"""Compressed: source text compresses about 4:1, so this keeps about 250 MB of text."""
LIST_TIMEOUT_S = 10.0

StatKey = tuple[int, int, int]
"""(mtime in ns, size, inode): a file whose key is unchanged was not written."""


@dataclass(frozen=True)
class Snapshot:
    """The workspace's files and their stat keys at one moment."""

    files: dict[str, StatKey]
    """By absolute path (strings: 10,000 ``Path`` objects cost more than the stat calls)."""


@dataclass(frozen=True)
class Change:
    """One file a command created, changed or removed."""

    path: Path
    before: str | None
    """The text before the command (``None``: it did not exist)."""
    missing: str | None = None
    """Set when the text before is not known, with the reason."""


@dataclass
class _Cached:
    key: StatKey
    data: bytes | None
    """zlib-compressed UTF-8 text, or ``None`` when not kept (see ``reason``)."""
    reason: str = ""


class WorkspaceSnapshots:
    """Snapshots of one workspace's files and the cache of their texts."""

    def __init__(
        self,
        root: Path,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_cache_bytes: int = MAX_CACHE_BYTES,
    ) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.max_cache_bytes = max_cache_bytes
        self._cache: dict[str, _Cached] = {}
        self.cached_bytes = 0
        self._rg = shutil.which("rg")
        self._lock = asyncio.Lock()
        """The sessions of a workspace share the cache; one refreshes it at a time."""

    async def take(self) -> Snapshot | None:
        """The files now, their texts cached; ``None`` when the workspace cannot be listed."""
        async with self._lock:
            files = await self._stat_all()
            if files is None:
                return None
            await asyncio.to_thread(self._refresh, files)
            return Snapshot(files)

    async def changes(self, before: Snapshot) -> list[Change]:
        """What changed since ``before``, each file with its text before (from the cache)."""
        async with self._lock:
            now = await self._stat_all()
            if now is None:
                return []
            return self._compare(before, now)

    def _compare(self, before: Snapshot, now: dict[str, StatKey]) -> list[Change]:
        changed: list[Change] = []
        for name in sorted(before.files.keys() | now.keys()):
            old, new = before.files.get(name), now.get(name)
            if old == new or self._control_plane(name):
                continue
            path = Path(name)
            if old is None:
                changed.append(Change(path, None))
                continue
            cached = self._cache.get(name)
            if cached is None or cached.key != old:
                changed.append(Change(path, None, "its content before the command was not read"))
            elif cached.data is None:
                changed.append(Change(path, None, cached.reason))
            else:
                changed.append(Change(path, zlib.decompress(cached.data).decode("utf-8")))
            # ``changes`` does not refresh the cache: the next ``take`` reads what changed.
        return changed

    def _control_plane(self, name: str) -> bool:
        """Settings, hooks and git's own files: not the command's doing (the daemon writes
        settings when a rule is remembered), and never what a rewind should put back."""
        relative = name[len(str(self.root)) + 1 :].split(os.sep)
        return any(part.casefold() in PROTECTED_NAMES for part in relative)

    # -- listing ------------------------------------------------------------------------

    async def _stat_all(self) -> dict[str, StatKey] | None:
        try:
            names = await asyncio.wait_for(self._list(), LIST_TIMEOUT_S)
        except (TimeoutError, OSError) as e:
            log.warning("could not list the workspace's files to checkpoint a command: %s", e)
            return None
        return await asyncio.to_thread(self._stat, names)

    async def _list(self) -> list[str]:
        if self._rg is None:
            return await asyncio.to_thread(
                lambda: [str(f.path) for f in walk_files(self.root, include_symlinks=False)]
            )
        proc = await asyncio.create_subprocess_exec(
            self._rg,
            "--files",
            "--hidden",
            "--null",
            "--no-messages",
            "--no-require-git",
            "--glob",
            "!.git",
            cwd=self.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            out, _ = await proc.communicate()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        # 1: nothing listed (an empty workspace); 2: some paths could not be read.
        if proc.returncode not in (0, 1, 2):
            raise OSError(f"rg --files exited with {proc.returncode}")
        prefix = str(self.root) + os.sep
        names = out.decode("utf-8", "surrogateescape").split("\0")
        return [prefix + name.removeprefix("./") for name in names if name]

    def _stat(self, paths: list[str]) -> dict[str, StatKey]:
        files: dict[str, StatKey] = {}
        for path in paths:
            try:
                st = os.lstat(path)
            except OSError:
                continue  # gone since it was listed
            if stat.S_ISREG(st.st_mode):  # symlinks are the editor's business, not rewind's
                files[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
        return files

    # -- the cache ----------------------------------------------------------------------

    def _refresh(self, files: dict[str, StatKey]) -> None:
        for path in self._cache.keys() - files.keys():
            self._drop(path)
        for path, key in files.items():
            cached = self._cache.get(path)
            if cached is not None and cached.key == key:
                continue
            self._drop(path)
            cached = self._cache[path] = self._read(path, key)
            # Read just now, before the command: the key it was read with is the one before.
            files[path] = cached.key
            self.cached_bytes += len(cached.data) if cached.data is not None else 0

    def _drop(self, path: str) -> None:
        cached = self._cache.pop(path, None)
        if cached is not None and cached.data is not None:
            self.cached_bytes -= len(cached.data)

    def _read(self, path: str, key: StatKey) -> _Cached:
        if key[1] > self.max_file_bytes:
            return _Cached(key, None, f"it is larger than {self.max_file_bytes // 1024} KiB")
        try:
            with os.fdopen(open_regular(path), "rb") as f:
                st = os.fstat(f.fileno())
                raw = f.read(self.max_file_bytes + 1)
        except OSError as e:
            return _Cached(key, None, f"it could not be read: {e}")
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        if len(raw) > self.max_file_bytes:
            return _Cached(key, None, f"it is larger than {self.max_file_bytes // 1024} KiB")
        if b"\0" in raw:
            return _Cached(key, None, "it is a binary file")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return _Cached(key, None, "it is not UTF-8 text")
        data = zlib.compress(raw, 1)
        if self.cached_bytes + len(data) > self.max_cache_bytes:
            limit = self.max_cache_bytes // (1024 * 1024)
            return _Cached(key, None, f"the checkpoint cache ({limit} MiB) was full")
        return _Cached(key, data)
