"""A sandboxed command's way out: its own filtering proxy, on a socket the sandbox sees.

Each command gets a proxy (``tether.network.proxy``) for as long as it runs, deciding for
the caller it runs for (its rules, its questions, its upstream proxy variables). The sockets
live in one private directory per workspace sandbox, bound read-only into every sandbox at
``bwrap.PROXY_DIR`` (the bubblewrap command line stays the same from one command to the
next, so a prepared sandbox still serves); which socket is the command's own is part of the
gate's job (``proxy NAME``), and the gate relays to it (``gate/forward.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether.network.hosts import Decide, Verdict, first_match
from tether.network.peer import Lineage
from tether.network.proxy import Blocked, FilteringProxy, Upstream, listening_socket
from tether.sandbox.bwrap import PROXY_DIR

SHOWN = 8
UNLISTED = 0o300
"""The sockets' directory: the owner may add, remove and reach entries, not list them."""
MAX_BASE = 107 - len("/tether-net-12345678/") - len("0123456789ab.sock")
"""The longest directory the sockets' directory can be made in (``sun_path``)."""


class ProxySockets:
    """The directory of proxy sockets (made when first needed, removed by ``close``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dir: Path | None = None

    def directory(self) -> Path:
        """The daemon's runtime directory, else the temporary one, else ``/tmp``: the first
        where a socket's path fits ``sun_path`` (108 bytes)."""
        with self._lock:
            if self._dir is None:
                bases = [os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir(), "/tmp"]
                fits = [b for b in bases if b and os.path.isdir(b) and len(b) < MAX_BASE]
                where = fits[0] if fits else None
                self._dir = Path(tempfile.mkdtemp(prefix="tether-net-", dir=where))
                # Searchable, never listable: a command reaches its own socket by the name
                # only its gate is told, and cannot list the other commands' (the directory
                # is read-only in the sandbox, so it cannot change the mode back).
                os.chmod(self._dir, UNLISTED)
            return self._dir

    def close(self) -> None:
        with self._lock:
            found, self._dir = self._dir, None
        if found is not None:
            with contextlib.suppress(OSError):
                os.chmod(found, 0o700)  # listable again, to be removed
            shutil.rmtree(found, ignore_errors=True)


class CommandProxy:
    """One command's proxy: started on the running loop, listening before the command
    starts (connections wait in the backlog until it accepts). It serves the command's own
    processes only: those below the pid given to ``own`` (``tether.network.peer``); a
    connection from any other (another command's sandbox that learnt the socket's name) is
    closed and reported."""

    def __init__(self, sockets: ProxySockets, decide: Decide, env: Mapping[str, str]) -> None:
        self.name = f"{secrets.token_hex(6)}.sock"
        self._path = sockets.directory() / self.name
        self._lineage = Lineage()
        self._proxy = FilteringProxy(decide, Upstream.from_env(env), self._lineage)
        self._listener = listening_socket(str(self._path))
        self._task = asyncio.get_running_loop().create_task(self._proxy.serve(self._listener))

    @property
    def inside(self) -> str:
        """The socket's path as the sandbox sees it."""
        return str(PROXY_DIR / self.name)

    @property
    def blocked(self) -> list[Blocked]:
        return self._proxy.blocked

    def own(self, pid: int) -> None:
        """The command's process, as the daemon started or took it (its ``bwrap``)."""
        self._lineage.own(pid)

    def close(self) -> None:
        if not self._task.done():
            self._task.cancel()
        self._lineage.close()
        self._proxy.close()
        self._listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self._path)


def by_settings(allowed: Sequence[str], denied: Sequence[str]) -> Decide:
    """Decisions from the settings' lists alone (nobody to ask)."""

    async def decide(host: str, port: int) -> Verdict:
        if (rule := first_match(denied, host, port)) is not None:
            return Verdict(False, f"denied by sandbox.network.deniedDomains {rule}")
        if first_match(allowed, host, port) is not None:
            return Verdict(True, "allowed by settings")
        return Verdict(False, "not in sandbox.network.allowedDomains")

    return decide


ADVICE = (
    "These hosts are not allowed for shell commands (the sandbox's network proxy answered "
    "403 / not allowed). Do not work around it (another proxy, raw sockets, a different "
    "host serving the same content). If the task needs one, tell the user which host and "
    "why: they can allow it when asked, or add it to sandbox.network.allowedDomains."
)


def explain(blocked: Sequence[Blocked]) -> list[str]:
    """Notes for the Bash tool's result, in Claude Code's terms (none when nothing was
    blocked)."""
    if not blocked:
        return []
    lines = [
        f"deny network-outbound {b.host}:{b.port} ({b.why})" if b.port else f"{b.host}: {b.why}"
        for b in blocked[:SHOWN]
    ]
    if len(blocked) > SHOWN:
        lines.append(f"and {len(blocked) - SHOWN} more")
    body = "\n".join(lines)
    return [f"<sandbox_violations>\n{body}\n</sandbox_violations>\n{ADVICE}"]
