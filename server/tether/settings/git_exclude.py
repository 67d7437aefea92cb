"""Keep the workspace's local settings out of git: ``.tether/*.local.*`` holds the user's
own answers ("always allow …") and must never be committed by accident.

When the daemon first writes such a file inside a git work tree, it adds the pattern to that
repository's ``info/exclude`` (the per-clone ignore file other tools use for local files),
so ``git status`` stays clean and nothing in the tree changes. This is the daemon's own
write, not a tool call: the agent still cannot touch ``.git``.

The repository is found by reading files, as git does, never by running git: a
repository's configuration may name programs (``core.fsmonitor``) that git would run.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

log = logging.getLogger(__name__)

LOCAL_GLOB = "*.local.*"
"""Files of ``.tether/`` that are the user's alone."""


def _git_dirs(start: Path) -> tuple[Path, Path] | None:
    """``(work tree top, common git dir)`` of the repository holding ``start``; None
    outside one. A ``.git`` file (worktrees, submodules) points at the real git dir, and a
    linked worktree's ``commondir`` at the dir its ``info/exclude`` lives in."""
    for top in (start, *start.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            return top, dot_git
        if dot_git.is_file():
            try:
                first = dot_git.read_text(encoding="utf-8").splitlines()[0]
            except (OSError, UnicodeDecodeError, IndexError):
                return None
            if not first.startswith("gitdir:"):
                return None
            git_dir = (top / first.removeprefix("gitdir:").strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                try:
                    git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
                except (OSError, UnicodeDecodeError):
                    return None
            return top, git_dir
    return None


GLOB_SPECIAL = re.compile(r"([\\\[\]*?])")
"""Characters gitignore(5) reads as a pattern: each is quoted with a backslash."""


def exclude_pattern(top: Path, tether_dir: Path) -> str | None:
    """The ``info/exclude`` line for ``tether_dir``'s local files, anchored at the work
    tree's top (a workspace in a subfolder gets its own path). The path is quoted as
    gitignore(5) says: a backslash before ``\\ [ ] * ?``, and before a leading ``#`` or
    ``!`` (a comment, a negation); trailing spaces cannot occur (the line ends with the
    glob). None for a path no line can name (a line break in it)."""
    relative = tether_dir.relative_to(top).as_posix()
    if "\n" in relative or "\r" in relative:
        return None
    quoted = GLOB_SPECIAL.sub(r"\\\1", relative)
    if quoted.startswith(("#", "!")):
        quoted = "\\" + quoted
    return f"{quoted}/{LOCAL_GLOB}"


def exclude_local_files(tether_dir: Path) -> Path | None:
    """Add ``.tether/*.local.*`` of ``tether_dir`` to its repository's ``info/exclude``
    unless a line already says so; returns the exclude file when it was changed. Failures
    are logged, never raised: the settings were written either way."""
    tether_dir = tether_dir.resolve()
    found = _git_dirs(tether_dir.parent)
    if found is None:
        return None
    top, git_dir = found
    pattern = exclude_pattern(top, tether_dir)
    exclude = git_dir / "info" / "exclude"
    if pattern is None:
        log.warning("not adding %s to %s: a line break in the path", tether_dir, exclude)
        return None
    try:
        if exclude.is_symlink():
            log.warning("not adding %s to %s: it is a symbolic link", pattern, exclude)
            return None
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        lines = {line.strip() for line in existing.splitlines()}
        if pattern in lines or f"/{pattern}" in lines:
            return None
        exclude.parent.mkdir(parents=True, exist_ok=True)
        separator = "" if existing == "" or existing.endswith("\n") else "\n"
        header = "# Tether: the user's own settings and answers, never committed\n"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(exclude, flags, 0o644)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(f"{separator}{header}{pattern}\n")
    except (OSError, UnicodeDecodeError) as e:
        log.warning("could not add %s to %s: %s", pattern, exclude, e)
        return None
    return exclude
