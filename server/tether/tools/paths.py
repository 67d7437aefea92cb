"""Workspace confinement for file tools: canonicalize, then allow only known roots.

A path the model gives is made canonical first: ``..`` and symlinks at any depth resolved,
and on a case-insensitive filesystem the case each name really has on disk. Only then is it
compared with the workspace and the additional directories. A regular file with several
hard links is refused: its other names may be outside, and no path arithmetic can tell.

Checking a path and then opening it by name leaves a window in which a concurrent process
(a sandboxed background command, say) can swap a directory for a symlink. The
``open_no_symlinks`` family closes it where the OS allows: the canonical path is walked one
component at a time with ``O_NOFOLLOW``, so any symlink that appeared after the check makes
the open fail instead of leaving the workspace.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from tether.core.environ import expand_home
from tether.core.files import kind_of, open_regular, read_capped
from tether.errors import ToolError
from tether.tools.names import read_shown_name

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
SAFE_OPEN_SUPPORTED = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd


def _path_text(value: str) -> str:
    value = read_shown_name(value)
    if "\x00" in value:
        raise ValueError("contains a NUL byte, which no file name can hold")
    if len(os.fsencode(value)) > MAX_PATH_BYTES:
        raise ValueError(f"is longer than {MAX_PATH_BYTES} bytes, more than any path can be")
    return value


MAX_PATH_BYTES = 4096
"""Linux's ``PATH_MAX``; longer paths fail in the OS (``ENAMETOOLONG``) wherever used."""
PathText = Annotated[str, AfterValidator(_path_text)]
"""A path in a tool's input: a C-quoted name as tools show it (``names.shown_name``) is read
back to the name; refused when it holds a NUL byte or is too long (the OS would raise
wherever it is used, in the permission check first)."""


class SymlinkSwapped(OSError):
    """A path that was checked has turned into (or through) a symlink since."""


@lru_cache(maxsize=64)
def _dir_is_case_insensitive(directory: str) -> bool:
    d = Path(directory)
    if not d.exists():
        return False
    entries = itertools.islice(d.iterdir(), 32) if d.is_dir() else iter(())
    for probe in (d, *entries):
        swapped = probe.name.swapcase()
        if swapped == probe.name:
            continue
        other = probe.with_name(swapped)
        try:
            return os.path.samefile(probe, other)
        except OSError:
            return False
    return False


def _exists(path: Path) -> bool:
    """``path.exists()``, False too where the system cannot even look (a name too long)."""
    try:
        return path.exists()
    except OSError:
        return False


def case_insensitive(path: Path) -> bool:
    """Is the filesystem holding ``path`` case-insensitive (macOS, Windows defaults)?"""
    existing = path
    while not _exists(existing) and existing != existing.parent:
        existing = existing.parent
    return _dir_is_case_insensitive(str(existing))


def _true_case(path: Path) -> Path:
    """The names as stored on disk, for the part of ``path`` that exists."""
    out = Path(path.anchor)
    for name in path.parts[1:]:
        try:
            entries = os.listdir(out)
        except OSError:
            entries = []
        folded = name.casefold()
        match = (
            name if name in entries else next((e for e in entries if e.casefold() == folded), name)
        )
        out = out / match
    return out


def canonical(path: Path) -> Path:
    """Absolute path with ``..``, every symlink (at any depth) and case variants resolved."""
    real = Path(os.path.realpath(path))
    return _true_case(real) if case_insensitive(real) else real


def is_within(path: Path, roots: list[Path], *, casefold: bool | None = None) -> bool:
    fold = case_insensitive(path) if casefold is None else casefold
    for root in roots:
        if fold:
            p, r = str(path).casefold(), str(root).casefold()
            if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
                return True
        elif path == root or path.is_relative_to(root):
            return True
    return False


def hard_links(path: Path) -> int:
    """How many names a regular file has (1 for anything else, or a missing path)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 1  # missing (about to be created) or unreadable: the caller reports that
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 1


def check_hard_links(path: Path) -> None:
    """Refuse a regular file that has other names: one may be outside the workspace."""
    count = hard_links(path)
    if count > 1:
        raise ToolError(
            f"{path} has {count} hard links. Another name of this file may be outside "
            "the workspace, so file tools do not read or change it."
        )


def resolve_tool_path(
    raw: str,
    cwd: Path,
    additional_dirs: list[Path] | None = None,
    caller: Mapping[str, str] | None = None,
) -> Path:
    """Resolve a path given by the model (absolute, or relative to the workspace root;
    ``~`` is the ``caller``'s home, None: this process's).

    Raises ToolError when the canonical path leaves the workspace and the additional
    directories, or names a multiply-linked file. The returned path is canonical.
    """
    if not raw or "\x00" in raw:
        raise ToolError("The path is empty or contains a NUL byte.")
    expanded = Path(expand_home(raw, caller))
    candidate = expanded if expanded.is_absolute() else cwd / expanded
    resolved = canonical(candidate)
    roots = [canonical(cwd), *(canonical(d) for d in additional_dirs or [])]
    if not is_within(resolved, roots):
        raise ToolError(
            f"The path {raw} is outside the workspace ({cwd}). "
            "Only files inside the workspace can be accessed."
        )
    check_hard_links(resolved)
    return resolved


def display_path(path: Path, cwd: Path) -> str:
    """A short path for titles: relative to the workspace when inside it."""
    try:
        return str(path.relative_to(canonical(cwd)))
    except ValueError:
        return str(path)


# -- opening without following symlinks ------------------------------------------------


def _open_parent(path: Path) -> int:
    """A descriptor of ``path``'s directory, reached without following any symlink."""
    fd = os.open(path.anchor or "/", os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in path.parts[1:-1]:
            try:
                nxt = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _not_a_directory(fd, name, path, e.errno)
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _not_a_directory(parent: int, name: str, path: Path, code: int) -> OSError:
    """Why ``name`` (in the directory ``parent``) cannot be walked through: a symlink that
    sits where a directory was checked, or something that never was a directory."""
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except OSError:
        mode = stat.S_IFLNK if code == errno.ELOOP else 0
    if stat.S_ISLNK(mode):
        return SymlinkSwapped(code, f"{name} in {path} is not a plain directory")
    return NotADirectoryError(
        errno.ENOTDIR, f"{name} in {path} is {kind_of(mode)}, not a directory"
    )


def open_no_symlinks(path: Path, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """``os.open`` of a regular file at a canonical absolute path, failing with
    SymlinkSwapped if any component is a symlink now, and with ``NotARegularFileError``
    (``IsADirectoryError``) for anything but a regular file, without ever blocking (see
    ``tether.core.files``). Falls back to a plain open where the OS cannot refuse links."""
    if not SAFE_OPEN_SUPPORTED:
        return open_regular(path, flags, mode)
    parent = _open_parent(path)
    try:
        return open_regular(
            path.name, flags | _NOFOLLOW, mode, dir_fd=parent, follow_symlinks=False, shown=path
        )
    except OSError as e:
        if e.errno == errno.ELOOP:  # the final name is a symlink
            raise SymlinkSwapped(e.errno, f"{path} is a symbolic link now")
        raise
    finally:
        os.close(parent)


def read_bytes_no_symlinks(
    path: Path, limit: int | None = None, *, max_bytes: int | None = None
) -> bytes:
    """The file's bytes: the first ``limit``, or all of them, refused
    (``FileTooLargeError``) when there are more than ``max_bytes``."""
    fd = open_no_symlinks(path)
    with os.fdopen(fd, "rb") as f:
        if max_bytes is not None:
            return read_capped(f, path, max_bytes)
        return f.read() if limit is None else f.read(limit)


def write_text_no_symlinks(path: Path, text: str) -> None:
    """Atomic write (temp file + rename inside the same directory descriptor), keeping the
    file's mode, without following a symlink anywhere on the way."""
    if not SAFE_OPEN_SUPPORTED:
        tmp = path.with_name(f".{path.name}.tether-tmp")
        tmp.write_text(text, encoding="utf-8", newline="")
        os.replace(tmp, path)
        return
    parent = _open_parent(path)
    try:
        try:
            mode = stat.S_IMODE(os.stat(path.name, dir_fd=parent, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            mode = 0o644
        tmp = f".{path.name}.{os.getpid()}.tether-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        fd = os.open(tmp, flags, mode, dir_fd=parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.replace(tmp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except FileNotFoundError:
                pass
            raise
    finally:
        os.close(parent)
