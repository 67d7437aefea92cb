"""What identifies each path a bubblewrap command line mounts on, so that a sandbox
prepared ahead (``prestart.py``) is known to still cover the files it was made for."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

Identities = dict[str, tuple[int, ...] | None]


def identities(prefix: Sequence[str]) -> Identities:
    """What identifies each path the sandbox mounts on now (None: not there). Where a mount
    protects (read-only binds, hiding tmpfs), the change time too: a file or directory
    replaced on the host may get the inode number just freed, and the new one has a new
    change time. Where a mount grants (the workspace, ``--chdir``), device and inode: a
    directory's change time moves with its entries, and a replaced one is only less
    reachable inside (what is under it is checked on its own)."""
    out: Identities = {}
    i = 1
    while i < len(prefix):
        option = prefix[i]
        arity = _ARITY.get(option, 0)
        if option in _PROTECTS or option in _GRANTS:
            path = prefix[i + arity]  # the destination: the last argument
            if path not in _STABLE:
                out[path] = _identity(path, full=option in _PROTECTS or path in out)
        i += 1 + arity
    return out


def same_objects(before: Identities, now: Identities) -> bool:
    """Whether every path is the same file or directory as before (or still missing): what
    was changed in place (a directory's entries, a file's text) counts as the same; what was
    removed, replaced or put in a missing one's place does not."""
    return before.keys() == now.keys() and all(
        _object(was) == _object(now[path]) for path, was in before.items()
    )


def _object(identity: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """Device and inode: which file it is, whatever was changed in it."""
    return None if identity is None else identity[:2]


def _identity(path: str, *, full: bool) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if full or not stat.S_ISDIR(st.st_mode):
        return (st.st_dev, st.st_ino, st.st_ctime_ns)
    return (st.st_dev, st.st_ino)


_ARITY = {
    **dict.fromkeys(
        ("--bind", "--ro-bind", "--bind-try", "--ro-bind-try", "--dev-bind", "--dev-bind-try"), 2
    ),
    **dict.fromkeys(("--symlink", "--setenv"), 2),
    **dict.fromkeys(
        ("--tmpfs", "--remount-ro", "--dev", "--proc", "--chdir", "--cap-drop", "--unsetenv"), 1
    ),
    **dict.fromkeys(("--dir", "--mqueue", "--perms", "--size", "--uid", "--gid"), 1),
}
"""Arguments each bubblewrap option takes (the others take none)."""
_PROTECTS = frozenset({"--ro-bind", "--ro-bind-try", "--tmpfs", "--remount-ro"})
_GRANTS = frozenset({"--bind", "--bind-try", "--chdir"})
_STABLE = frozenset({"/", "/dev", "/proc", "/tmp", "/run"})
"""Mount points that are never replaced."""
