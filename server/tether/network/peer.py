"""Who may use a command's proxy: processes of that command's own sandbox, nobody else.

The proxy's socket lies in a directory every sandbox of the workspace sees (read-only,
unlistable, random names); a name is not a secret to rely on. On accept the proxy reads the
peer's credentials (``SO_PEERCRED``: its pid as the daemon's pid namespace sees it, taken
by the kernel when the peer connected) and follows the parent links in ``/proc`` up to the
command's own process (the ``bwrap`` the daemon spawned, or the prepared one it took). A
peer that is not below it, that is gone, or that lies deeper than ``MAX_DEPTH`` is refused.

Processes a command leaves behind are re-parented inside its sandbox (to the sandbox's
first process, itself below ``bwrap``), so they still count as the command's own.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Protocol

MAX_DEPTH = 64
"""Parent links followed from a peer before it is refused (a sandbox's tree is shallow)."""
OWNER_WAIT_S = 30.0
"""How long a connection made before its command's pid is known waits for it."""
_UCRED = struct.Struct("3i")


class Peer(Protocol):
    """The accepted end of a Unix socket (a ``socket.socket``, or the transport's view of
    one)."""

    def getsockopt(self, level: int, optname: int, buflen: int, /) -> bytes: ...


def peer_pid(sock: Peer) -> int | None:
    """The pid of the process at the other end of a Unix socket (None: unknown)."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    except OSError:
        return None
    pid = _UCRED.unpack(raw)[0]
    return pid if pid > 0 else None


def parent_of(pid: int) -> int | None:
    """The parent of ``pid`` (None: gone or unreadable). The name in ``stat`` may hold any
    byte, parentheses included, so the fields are read after its last ``)``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def descends(pid: int, root: int, max_depth: int = MAX_DEPTH) -> bool:
    """True when ``pid`` is ``root`` or below it, within ``max_depth`` parent links."""
    current: int | None = pid
    for _ in range(max_depth + 1):
        if current is None or current <= 1:
            return False
        if current == root:
            return True
        current = parent_of(current)
    return False


class Lineage:
    """The processes of one command: those below the pid given to ``own`` (once, when the
    command's process exists). Connections accepted before that wait for it."""

    def __init__(self) -> None:
        self._root: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def own(self, pid: int) -> None:
        """The command's process (the spawned ``bwrap``, or the prepared one taken)."""
        if not self._root.done():
            self._root.set_result(pid)

    async def admits(self, peer: Peer) -> bool:
        """Whether the process at the other end of ``peer`` belongs to the command."""
        pid = peer_pid(peer)
        if pid is None:
            return False
        try:
            root = await asyncio.wait_for(asyncio.shield(self._root), OWNER_WAIT_S)
        except TimeoutError:
            return False
        return descends(pid, root)

    def close(self) -> None:
        if not self._root.done():
            self._root.cancel()
