"""Where a call's path leads, resolved the way the kernel would for the caller.

All but the last component is looked up by the kernel itself (``openat`` with ``O_PATH``)
from the caller's working directory or descriptor; the result is an ``O_PATH`` descriptor
of the supervisor's and that directory's canonical path (``/proc/self/fd``), checked to
lead back to the same directory. ``/proc/self`` and ``/proc/thread-self`` mean the
supervisor's own when it looks them up, so a lookup that ends there is redone in the
caller's ``/proc/PID``.
"""

from __future__ import annotations

import errno
import os
import stat

MAX_LINKS = 40
"""Symlinks followed in one lookup before ELOOP (as the kernel)."""


class Refused(Exception):
    def __init__(self, op: str, path: str, why: str) -> None:
        super().__init__(why)
        self.op, self.path, self.why = op, path, why


class Place:
    """A directory (an ``O_PATH`` descriptor of the supervisor's), its canonical path, and
    the name to create in it."""

    __slots__ = ("dir", "fd", "name", "path", "slash")

    def __init__(self, fd: int, directory: str, name: str, slash: bool) -> None:
        self.fd, self.dir, self.name, self.slash = fd, directory, name, slash
        self.path = directory if name == "." else f"{directory.rstrip('/')}/{name}"

    def close(self) -> None:
        os.close(self.fd)


def resolve(start: int | None, path: str, caller: tuple[int, int]) -> Place:
    slash = path.endswith("/") and path.strip("/") != ""
    trimmed = path.rstrip("/") or "/"
    head, sep, name = trimmed.rpartition("/")
    parent = (head or "/") if sep else "."
    if trimmed == "/" or name in (".", ".."):
        parent, name = trimmed, "."
    fd = os.open(parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=start)
    try:
        directory = os.readlink(f"/proc/self/fd/{fd}")
        mine = _own_proc(directory, caller)
        if mine is not None:  # reached through /proc/self: the caller meant its own
            os.close(fd)
            fd = -1
            fd = os.open(mine, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            directory = os.readlink(f"/proc/self/fd/{fd}")
        if not directory.startswith("/") or directory.endswith(" (deleted)"):
            raise OSError(errno.ENOENT, "the directory is gone")
        here, there = os.fstat(fd), os.stat(directory)
        if (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino):
            raise Refused("lookup", path, "the directory is not reachable by its own path")
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    return Place(fd, directory, name, slash)


def _own_proc(directory: str, caller: tuple[int, int]) -> str | None:
    """``directory`` with the gate's own ``/proc/PID`` replaced by the caller's (thread's
    for ``task/PID``), or None when it is not under the gate's."""
    me = f"/proc/{os.getpid()}"
    if directory != me and not directory.startswith(me + "/"):
        return None
    tgid, tid = caller
    rest = directory[len(me) :]
    task = f"/task/{os.getpid()}"
    if rest == task or rest.startswith(task + "/"):
        rest = f"/task/{tid}" + rest[len(task) :]
    return f"/proc/{tgid}{rest}"


def in_proc(place: Place) -> bool:
    """A directory of procfs: its symlinks lead to open files, not to paths (nothing can be
    created through them), and nothing can be created in it."""
    return place.dir == "/proc" or place.dir.startswith("/proc/")


def follow(place: Place, flags: int, caller: tuple[int, int]) -> Place:
    """Where an ``O_CREAT`` open of ``place`` lands: a final symlink is followed unless
    ``O_NOFOLLOW`` or ``O_EXCL`` (the kernel follows none then)."""
    if flags & (os.O_NOFOLLOW | os.O_EXCL) or place.slash or place.name in (".", ".."):
        return place
    try:
        for _ in range(MAX_LINKS):
            st = lstat(place)
            if st is None or not stat.S_ISLNK(st.st_mode) or in_proc(place):
                return place
            target = os.readlink(place.name, dir_fd=place.fd)
            following = place
            place = resolve(None if target.startswith("/") else place.fd, target, caller)
            following.close()
            if place.slash:
                return place
    except BaseException:
        place.close()
        raise
    place.close()
    raise OSError(errno.ELOOP, "too many levels of symbolic links")


def lstat(place: Place, *, follow: bool = False) -> os.stat_result | None:
    try:
        return os.stat(place.name, dir_fd=place.fd, follow_symlinks=follow)
    except FileNotFoundError:
        return None


def lexists(place: Place) -> bool:
    return lstat(place) is not None
