"""Opening files that anyone may have put in the workspace: regular files only, and never
an open that waits.

Opening a FIFO for reading blocks until some process opens it for writing; reading a
character device (``/dev/zero``, a terminal) may never end; a socket cannot be opened at
all. A worker thread stuck in such an open is stuck for good, and the model can make a FIFO
itself (``mkfifo``). So every file Tether reads on someone else's behalf is looked at first
(``lstat``, which opens nothing: a device is never opened, even for a moment), opened with
``O_NONBLOCK`` (a FIFO that appeared since then opens at once instead of waiting) and checked
again on the descriptor (``fstat``); only then is ``O_NONBLOCK`` cleared. Anything but a
regular file is refused with ``NotARegularFileError`` naming what it is.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO

NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
)


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a FIFO (named pipe)", "a regular file")."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


class NotARegularFileError(OSError):
    """The path names a FIFO, a device or a socket where a file was wanted."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(
            errno.EINVAL,
            f"{path} is {kind}, not a regular file; only regular files are read or written",
        )
        self.path = str(path)
        self.kind = kind

    def __str__(self) -> str:
        return str(self.strerror)


MAX_TEXT_FILE_BYTES = 32 << 20
"""Largest file Tether reads whole as text (to edit or write it, to watch it for changes):
bigger ones are refused before they are read, and Read takes them in parts."""


class FileTooLargeError(OSError):
    """A file bigger than what it is read for may hold."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(
            errno.EFBIG, f"{path} is {size} bytes, more than the {limit} read whole as text"
        )
        self.path = str(path)
        self.size = size
        self.limit = limit

    def __str__(self) -> str:
        return str(self.strerror)


def read_capped(f: BinaryIO, path: Path | str, max_bytes: int) -> bytes:
    """All of an open file, refused (``FileTooLargeError``) when it is over ``max_bytes``:
    checked before reading, and again while reading (it may be growing)."""
    size = os.fstat(f.fileno()).st_size
    if size > max_bytes:
        raise FileTooLargeError(path, size, max_bytes)
    data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLargeError(path, max(size, len(data)), max_bytes)
    return data


_PLAIN_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop)",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.EROFS: "the file system is read-only",
    errno.E2BIG: "the command line would be too long",
}


def os_error_text(e: OSError) -> str:
    """What went wrong, in words a person (or the model) can act on."""
    return _PLAIN_REASONS.get(e.errno or 0) or str(e.strerror or e)


def check_regular(path: Path | str, mode: int) -> None:
    """Raise unless ``mode`` is a regular file's (``IsADirectoryError`` for a directory, as
    ``open`` would)."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"{path} is a directory, not a file")
    raise NotARegularFileError(path, kind_of(mode))


def open_regular(
    path: Path | str,
    flags: int = os.O_RDONLY,
    mode: int = 0o666,
    *,
    dir_fd: int | None = None,
    follow_symlinks: bool = True,
    shown: Path | str | None = None,
) -> int:
    """``os.open`` for a regular file, refusing anything else without blocking. ``shown``:
    the name for messages when ``path`` is relative to ``dir_fd``."""
    name = shown if shown is not None else path
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if not (stat.S_ISLNK(st.st_mode) and not follow_symlinks):
            check_regular(name, st.st_mode)
    try:
        fd = os.open(path, flags | NONBLOCK | CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO without a reader, or a socket, appeared
            raise NotARegularFileError(name, "a FIFO or a socket") from None
        raise
    try:
        check_regular(name, os.fstat(fd).st_mode)
        if NONBLOCK:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """A regular file's bytes (the first ``limit`` of them)."""
    with os.fdopen(open_regular(path), "rb") as f:
        return f.read() if limit is None else f.read(limit)


def read_regular_text(
    path: Path, encoding: str = "utf-8", max_bytes: int = MAX_TEXT_FILE_BYTES
) -> str:
    """``Path.read_text`` (universal newlines included) for a regular file only, of at most
    ``max_bytes`` (``FileTooLargeError``)."""
    with os.fdopen(open_regular(path), "rb") as f:
        data = read_capped(f, path, max_bytes)
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
