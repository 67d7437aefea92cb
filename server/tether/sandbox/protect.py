"""What the sandbox keeps read-only inside the paths commands may write: the control plane.

At the top of each writable root, every protected name is protected whether it exists or
not: a missing one gets an inert stand-in for the length of the command, so nothing can
create it. Below the top, the protected entries that exist are found by a bounded walk
(dependency trees such as ``node_modules`` are skipped; the result is reused for a few
seconds, commands come in bursts): nested repositories, nested agent and editor settings,
git directories recognised by their contents, and the git directory a ``.git`` file names.

A git directory is bound read-write onto itself — a mount point cannot be renamed or
replaced — with what git reads as configuration or runs (``GIT_LOCKED``) read-only inside
it, so ``git add``/``commit``/``branch`` work and ``core.fsmonitor`` or a hook cannot be
planted. With ``gitWritable: false`` every git directory is read-only.

A protected entry that is a symlink cannot be bound (bubblewrap follows it), and the
directory holding it stays writable, so the link itself could be replaced. Its target is
protected instead (when commands may write there), and the sandbox puts the link back
after every command (``restore_links``); the replacement is kept beside it, renamed.

Limits: mounts protect what exists when the command starts. A command may create a new
protected entry below the top level (``git init sub`` makes ``sub/.git``); the next
command finds and binds it read-only, and the permission pipeline asks before any write
it can see into such a path (file tools, redirections, file commands).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.permissions.controlplane import (
    GIT_LOCKED,
    NO_STAND_IN,
    PROTECTED_DIRS,
    PROTECTED_FILES,
    PROTECTED_NAMES,
    Protected,
)

log = logging.getLogger(__name__)

WALK_MAX_DEPTH = 6
WALK_MAX_ENTRIES = 30_000
DISCOVERY_TTL_S = 3.0
SKIPPED_DIRS = frozenset(
    {
        *("node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache"),
        *(".pytest_cache", ".ruff_cache", "target", ".gradle", ".next", ".terraform"),
    }
)
"""Dependency and cache trees: huge, and no editor or git looks for settings in them."""
_GIT_DIR_MARKERS = frozenset({"HEAD", "objects", "refs"})
_DIR_LOCKS = frozenset({"hooks", "info", "modules", "worktrees"})


@dataclass(frozen=True)
class Found:
    entries: tuple[Path, ...]
    """Existing protected names below the top of a root (files, dirs or symlinks)."""
    git_dirs: tuple[Path, ...]
    """Git directories found by their contents or named by ``.git`` files (canonical)."""
    complete: bool
    """The walk saw the whole tree within its budget."""


def _gitdir_of(dot_git_file: Path) -> Path | None:
    try:
        with open(dot_git_file, encoding="utf-8", errors="replace") as f:
            first = f.readline(4096).strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first.removeprefix("gitdir:").strip())
    target = target if target.is_absolute() else dot_git_file.parent / target
    return Path(os.path.realpath(target))


def walk(root: Path) -> Found:
    """The protected entries under ``root`` (below its top level), bounded."""
    entries: list[Path] = []
    git_dirs: list[Path] = []
    budget = WALK_MAX_ENTRIES
    stack: list[tuple[Path, int]] = [(root, 0)]
    complete = True
    while stack:
        directory, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                listing = list(it)
        except OSError:
            continue
        budget -= len(listing)
        if budget < 0:
            complete = False
            break
        names = {e.name for e in listing}
        if depth > 0 and names >= _GIT_DIR_MARKERS:
            git_dirs.append(Path(os.path.realpath(directory)))
            continue
        for entry in listing:
            name = entry.name
            path = Path(entry.path)
            if name.casefold() in PROTECTED_NAMES:
                if depth > 0:
                    entries.append(path)
                if name == ".git" and entry.is_file(follow_symlinks=False):
                    named = _gitdir_of(path)
                    if named is not None:
                        git_dirs.append(named)
                continue
            if name in SKIPPED_DIRS or not entry.is_dir(follow_symlinks=False):
                continue
            if depth + 1 < WALK_MAX_DEPTH:
                stack.append((path, depth + 1))
            else:
                complete = False
    return Found(tuple(entries), tuple(dict.fromkeys(git_dirs)), complete)


class Discovery:
    """``walk`` results per root, reused for ``ttl_s`` seconds."""

    def __init__(self, ttl_s: float = DISCOVERY_TTL_S) -> None:
        self._ttl_s = ttl_s
        self._cache: dict[Path, tuple[float, Found]] = {}
        self._lock = threading.Lock()

    def found(self, root: Path) -> Found:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(root)
        if hit is not None and now - hit[0] < self._ttl_s:
            return hit[1]
        result = walk(root)
        with self._lock:
            self._cache[root] = (now, result)
        return result


def _entry(path: Path, kind: str) -> Protected:
    exists = os.path.lexists(path)
    if exists and not path.is_symlink():
        kind = "dir" if path.is_dir() else "file"
    return Protected(path, "dir" if kind == "dir" else "file", exists)


def git_layout(git_dir: Path, *, writable: bool) -> list[Protected]:
    """A git directory: all read-only, or writable with ``GIT_LOCKED`` read-only in it."""
    if not writable:
        return [_entry(git_dir, "dir")]
    out = [Protected(git_dir, "dir", True, writable_mount=True)]
    for name in GIT_LOCKED:
        item = _entry(git_dir / name, "dir" if name in _DIR_LOCKS else "file")
        if name == "commondir" and not item.exists:
            item = Protected(item.path, "file", False, stand_in=b".\n")  # "here": inert
        out.append(item)
    return out


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


@dataclass(frozen=True)
class Plan:
    """Everything the sandbox protects for one command."""

    items: tuple[Protected, ...]
    links: tuple[tuple[Path, str], ...]
    """Protected entries that are symlinks, with their targets (restored afterwards)."""


def plan(roots: Sequence[Path], found: Iterable[Found], *, git_writable: bool) -> Plan:
    """What to bind read-only under the writable ``roots`` (canonical)."""
    items: dict[Path, Protected] = {}
    links: list[tuple[Path, str]] = []
    git_dirs: list[Path] = []

    def protect(path: Path, kind: str) -> None:
        if path.is_symlink():
            try:
                links.append((path, os.readlink(path)))
            except OSError:
                return
            target = Path(os.path.realpath(path))
            if _inside(target, roots) and target.exists():
                protect(target, "dir" if target.is_dir() else "file")
            return
        if path.name == ".git" and path.is_dir():
            git_dirs.append(path)
            return
        if path.name == ".git" and path.is_file():
            named = _gitdir_of(path)
            if named is not None:
                git_dirs.append(named)
        items.setdefault(path, _entry(path, kind))

    for root in roots:
        for name in PROTECTED_DIRS:
            if name != ".git":
                protect(root / name, "dir")
        for name in PROTECTED_FILES:
            if name != ".git" and (name not in NO_STAND_IN or os.path.lexists(root / name)):
                protect(root / name, "file")
        dot_git = root / ".git"
        if os.path.lexists(dot_git):
            protect(dot_git, "dir")
        else:
            items[dot_git] = Protected(dot_git, "dir", False)  # an inert empty stand-in
    for result in found:
        for path in result.entries:
            protect(path, "dir")
        git_dirs += result.git_dirs
    for git_dir in dict.fromkeys(git_dirs):
        if _inside(git_dir, roots) and git_dir.is_dir():
            for item in git_layout(git_dir, writable=git_writable):
                items[item.path] = item
    return Plan(tuple(items.values()), tuple(links))


def restore_links(links: Sequence[tuple[Path, str]]) -> list[Path]:
    """Put back protected symlinks a command replaced; the replacement is renamed aside.
    Returns the links that had to be restored."""
    restored: list[Path] = []
    for path, target in links:
        try:
            if path.is_symlink() and os.readlink(path) == target:
                continue
            if os.path.lexists(path):
                aside = path.with_name(f"{path.name}.replaced-{int(time.time())}")
                os.rename(path, aside)
                log.warning("a command replaced the protected link %s; kept as %s", path, aside)
            os.symlink(target, path)
            restored.append(path)
        except OSError as e:
            log.warning("could not restore the protected link %s: %s", path, e)
    return restored
