"""What the daemon itself does to the workspace after a sandboxed command: only inside it.

The daemon runs unsandboxed, and a command may have replaced any folder of the workspace by a
link to somewhere else (the user's other project, the home folder). So a host-side action
never resolves a path by name: it opens the workspace root, then each folder below it with
``O_NOFOLLOW | O_DIRECTORY`` relative to the one above (``dir_fd=``), and acts on the last
name relative to that descriptor. A component that is a link, is not a folder, or is ``..``
refuses the action: a command-made link is never followed.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Outside(OSError):
    """The path cannot be reached from a root through real folders only."""


def _root_of(path: Path, roots: Sequence[Path]) -> Path | None:
    holding = [r for r in roots if path != r and path.is_relative_to(r)]
    return max(holding, key=lambda r: len(r.parts), default=None)


@contextmanager
def parent_fd(path: Path, roots: Sequence[Path]) -> Generator[int]:
    """A descriptor of ``path``'s folder, reached from the root holding it through real
    folders only (``Outside`` otherwise)."""
    root = _root_of(path, roots)
    if root is None:
        raise Outside(f"{path} is not inside the workspace")
    parts = path.relative_to(root).parts[:-1]
    if any(p in ("..", ".", "") for p in (*parts, path.name)):
        raise Outside(f"{path} is not a plain path")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                raise Outside(f"{path}: {part} is not a folder of the workspace ({e})") from e
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def restore_link(path: Path, target: str, roots: Sequence[Path]) -> bool:
    """Put the link ``path`` -> ``target`` back if a command replaced it, keeping the
    replacement beside it, renamed; True when it had to be restored."""
    name = path.name
    with parent_fd(path, roots) as fd:
        try:
            if os.readlink(name, dir_fd=fd) == target:
                return False
        except FileNotFoundError:
            pass
        except OSError:  # not a link (EINVAL): the command put something else there
            pass
        try:
            os.lstat(name, dir_fd=fd)
            exists = True
        except FileNotFoundError:
            exists = False
        if exists:
            aside = f"{name}.replaced-{int(time.time())}"
            os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=fd)
            log.warning("a command replaced the protected link %s; kept as %s", path, aside)
        os.symlink(target, name, dir_fd=fd)
        return True
