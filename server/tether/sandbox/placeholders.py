"""Stand-ins for protected paths that do not exist yet.

bubblewrap can only bind something read-only where something already exists. A missing
``.tether`` or ``.mcp.json`` would otherwise be free for a sandboxed command to create
(and a planted ``.tether/settings.local.json`` could allow everything). So for the length
of a command, each missing protected path gets an empty directory or a file that is then
bound read-only; afterwards it is removed again if it is still ours and unchanged.
Stand-ins are inert for the tools that read these paths (git skips an empty ``.git``
directory and reads a ``commondir`` of ``.`` as "here", editors find no settings in an
empty folder).

Background commands overlap, so stand-ins are reference-counted. An unused stand-in
lingers for a moment before it is removed (off the command's path, by a timer): an agent
runs commands in bursts, and removing a directory costs milliseconds on some filesystems.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.permissions.controlplane import Protected

log = logging.getLogger(__name__)

LINGER_S = 2.0


@dataclass
class _Held:
    kind: str
    inode: int
    size: int = 0
    users: int = 1
    idle_since: float = 0.0


class Placeholders:
    def __init__(self, linger_s: float = LINGER_S) -> None:
        self._held: dict[Path, _Held] = {}
        self._lock = threading.Lock()
        self._linger_s = linger_s
        self._timer: threading.Timer | None = None

    @contextlib.contextmanager
    def hold(self, items: Sequence[Protected]) -> Generator[list[Protected]]:
        """Create stand-ins for the missing items; yields every item as it now is."""
        taken: list[Path] = []
        now: list[Protected] = []
        try:
            for item in items:
                # A lingering stand-in of ours "exists" too: take it, so it stays put.
                if not self._acquire(item):
                    now.append(item)
                    continue
                taken.append(item.path)
                now.append(Protected(item.path, item.kind, True, item.writable_mount))
            yield now
        finally:
            released = [path for path in taken if self._release(path)]
            if released:
                self._schedule_sweep()

    def _acquire(self, item: Protected) -> bool:
        with self._lock:
            held = self._held.get(item.path)
            if held is not None:
                held.users += 1  # still there from an earlier command, or shared
                return True
            if item.exists:
                return False  # the real thing: bound as it is
            try:
                if item.kind == "dir":
                    item.path.mkdir(mode=0o755)
                else:
                    fd = os.open(item.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                    try:
                        os.write(fd, item.stand_in)
                    finally:
                        os.close(fd)
                inode = os.lstat(item.path).st_ino
            except FileExistsError:
                return False  # appeared meanwhile: it is real, bind it as it is
            except OSError as e:
                # No parent directory (nothing can be created there from inside either,
                # since the parent is created only by what we protect) or no permission.
                log.debug("no stand-in for %s: %s", item.path, e)
                return False
            self._held[item.path] = _Held(item.kind, inode, len(item.stand_in))
            return True

    def _release(self, path: Path) -> bool:
        """True if the stand-in is now unused."""
        with self._lock:
            held = self._held.get(path)
            if held is None:
                return False
            held.users -= 1
            if held.users > 0:
                return False
            held.idle_since = time.monotonic()
            return True

    def _schedule_sweep(self) -> None:
        if self._linger_s <= 0:
            self.sweep(0)
            return
        # One timer for all stand-ins: starting a thread per stand-in per command cost
        # more than the command's own sandbox setup.
        with self._lock:
            if self._timer is not None:
                return
            self._timer = threading.Timer(self._linger_s + 0.05, self._timed_sweep)
            self._timer.daemon = True
            self._timer.start()

    def _timed_sweep(self) -> None:
        with self._lock:
            self._timer = None
        self.sweep()
        with self._lock:
            idle = any(held.users == 0 for held in self._held.values())
        if idle:  # used again meanwhile: its own linger time is not over yet
            self._schedule_sweep()

    def sweep(self, idle_for: float | None = None) -> None:
        """Remove stand-ins unused for ``idle_for`` seconds (default: the linger time)."""
        limit = self._linger_s if idle_for is None else idle_for
        now = time.monotonic()
        with self._lock:
            for path, held in list(self._held.items()):
                if held.users == 0 and now - held.idle_since >= limit:
                    del self._held[path]
                    _remove_if_ours(path, held)

    def held(self) -> list[Path]:
        with self._lock:
            return list(self._held)


def _remove_if_ours(path: Path, held: _Held) -> None:
    try:
        st = os.lstat(path)
        if st.st_ino != held.inode:
            return  # replaced by someone else: not ours any more
        if held.kind == "dir":
            path.rmdir()  # fails (and stays) if the user put something in it
        elif st.st_size == held.size:
            path.unlink()
    except OSError:
        pass
