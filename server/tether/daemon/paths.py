"""Where the daemon lives: a private runtime directory holding its socket, pid and log.

``$TETHER_RUNTIME_DIR`` if set, else ``$XDG_RUNTIME_DIR/tether``, else
``/tmp/tether-<uid>``. The directory is created 0700 and must belong to the user: a
directory someone else made (in ``/tmp``) is refused, never used. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

INSTANCE_VARIABLES = ("TETHER_DATA_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME")
"""Clients that disagree on these (where settings and transcripts live) get daemons of
their own: a daemon serves one home."""


class RuntimeDirError(OSError):
    """The runtime directory is not private to this user."""


def runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    explicit = env.get("TETHER_RUNTIME_DIR")
    if explicit:
        path = Path(explicit)
    elif env.get("XDG_RUNTIME_DIR"):
        path = Path(env["XDG_RUNTIME_DIR"]) / "tether"
    else:
        path = Path("/tmp") / f"tether-{os.getuid()}"
    return path


def ensure_private(path: Path) -> Path:
    """Create ``path`` 0700 if missing; refuse one that is not ours or is open to others."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private(path)
    if path.lstat().st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def check_private(path: Path) -> None:
    """Refuse ``path`` if it exists and is not a directory of this user (a missing one is
    made by ``ensure_private`` when a daemon starts)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeDirError(
            f"the runtime directory {path} is not a directory; set TETHER_RUNTIME_DIR to a "
            "directory of your own"
        )
    if info.st_uid != os.getuid():
        raise RuntimeDirError(
            f"the runtime directory {path} belongs to another user (uid {info.st_uid}); set "
            "TETHER_RUNTIME_DIR to a directory of your own"
        )


def instance(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    key = "\0".join(env.get(name, "") for name in INSTANCE_VARIABLES)
    return hashlib.blake2b(key.encode(), digest_size=4).hexdigest()


def socket_path(env: Mapping[str, str] | None = None) -> Path:
    return runtime_dir(env) / f"daemon-{instance(env)}.sock"


def warm_path(socket: Path) -> Path:
    """Present while the daemon listening on ``socket`` has warmed up: a client that finds
    its socket without it runs in-process rather than wait for the warm-up."""
    return socket.with_suffix(".warm")


def log_path(env: Mapping[str, str] | None = None) -> Path:
    return runtime_dir(env) / f"daemon-{instance(env)}.log"


def alive_lock_path(env: Mapping[str, str] | None = None) -> Path:
    """Locked by the daemon for its whole life, from before it listens: a client that finds
    no socket but this lock taken knows one is starting."""
    return runtime_dir(env) / f"daemon-{instance(env)}.lock"
