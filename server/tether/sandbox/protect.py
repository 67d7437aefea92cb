"""What the sandbox keeps read-only inside the paths commands may write: the control plane.

Protected entries that exist are bound read-only: at the top of each writable root by name,
below it as found by a bounded walk (dependency trees such as ``node_modules`` are skipped;
the result is reused for a few seconds, commands come in bursts): nested repositories,
nested agent and editor settings, git directories recognised by their contents, the git
directory a ``.git`` file names, and what configuration makes the host run (``doors.py``).
What does not exist is not created: the gate (``gate/``) refuses to bring it into existence,
by the policy made here.

A git directory is bound read-write onto itself — a mount point cannot be renamed or
replaced — with what git reads as configuration or runs (``GIT_LOCKED``) read-only inside
it, so ``git add``/``commit``/``branch`` work and ``core.fsmonitor`` or a hook cannot be
planted. With ``gitWritable: false`` every git directory is read-only.

A protected entry that is a symlink cannot be bound (bubblewrap follows it), and the
directory holding it stays writable, so the link itself could be replaced. Its target is
protected instead (when commands may write there), and the sandbox puts the link back
after every command (``restore_links``), reaching it through real folders only (``host_fs``);
the replacement is kept beside it, renamed.

A tree the bounded walk (``WALK_MAX_DEPTH``, ``WALK_MAX_ENTRIES``) cannot finish is walked
whole, by name (``Discovery``). Limits: ``SKIPPED_DIRS`` are not entered: an existing
protected entry there is not bound, though nothing new can be created there.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.permissions.controlplane import (
    GIT_LOCKED,
    PROTECTED_DIRS,
    PROTECTED_FILES,
    PROTECTED_NAMES,
    Protected,
)
from tether.sandbox.door_words import entry_doors, root_doors
from tether.sandbox.doors import (
    PACKAGE_CONFIGS,
    Door,
    DoorFinder,
    Repo,
    direnv,
    direnv_loads_dotenv,
    folder_open_tasks,
    home_doors,
    package_configs,
    settings_programs,
    user_configs,
    version_manager_configs,
)
from tether.sandbox.exposure import within
from tether.sandbox.gate.policy import Policy
from tether.sandbox.gitstore import IsDoor, Watched
from tether.sandbox.home_entries import home_entries
from tether.sandbox.host_fs import restore_link
from tether.sandbox.venv import find_venvs, venv_doors

SANDBOX_NAMES = PROTECTED_NAMES | frozenset(n.casefold() for n in PACKAGE_CONFIGS)
"""Names kept from commands at any depth: the control plane's, and the package managers'
configuration, read below the top too (npm a package's own ``.npmrc`` beside its
``package.json``, Yarn every ``.yarnrc.yml`` from the folder it runs in up, pnpm a
package's ``.pnpmfile.cjs``)."""

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
_DIR_LOCKS = frozenset(
    {"hooks", "info", "modules", "worktrees", "rebase-merge", "rebase-apply", "sequencer"}
)


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


def walk(root: Path, *, bounded: bool = True) -> Found:
    """The protected entries under ``root`` (below its top level): within
    ``WALK_MAX_DEPTH`` and ``WALK_MAX_ENTRIES`` when ``bounded``, else the whole tree (but
    ``SKIPPED_DIRS``). Names only: a ``Path`` is made for what is found, not for every entry."""
    entries: list[Path] = []
    git_dirs: list[Path] = []
    budget = WALK_MAX_ENTRIES
    stack: list[tuple[str, int]] = [(str(root), 0)]
    complete = True
    while stack:
        directory, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                listing = list(it)
        except OSError:
            continue
        if bounded:
            budget -= len(listing)
            if budget < 0:
                complete = False
                break
        if depth > 0 and {e.name for e in listing} >= _GIT_DIR_MARKERS:
            git_dirs.append(Path(os.path.realpath(directory)))
            continue
        for entry in listing:
            name = entry.name
            if name.casefold() in SANDBOX_NAMES:
                path = Path(entry.path)
                if depth > 0:
                    entries.append(path)
                if name == ".git" and entry.is_file(follow_symlinks=False):
                    named = _gitdir_of(path)
                    if named is not None:
                        git_dirs.append(named)
                continue
            if name in SKIPPED_DIRS or not entry.is_dir(follow_symlinks=False):
                continue
            if not bounded or depth + 1 < WALK_MAX_DEPTH:
                stack.append((entry.path, depth + 1))
            else:
                complete = False
    return Found(tuple(entries), tuple(dict.fromkeys(git_dirs)), complete)


class Discovery:
    """``walk`` results per root, reused for ``ttl_s`` seconds. A tree the bounded walk
    cannot finish is walked whole (names only; ``bench/sandbox.py`` measures it) and that
    result is kept ``FULL_TTL_FACTOR`` times longer: repositories and door files beyond any
    budget are found however big the tree, and what a command creates does not need the
    walk (the gate refuses it)."""

    FULL_TTL_FACTOR = 10

    def __init__(self, ttl_s: float = DISCOVERY_TTL_S) -> None:
        self._ttl_s = ttl_s
        self._cache: dict[Path, tuple[float, Found]] = {}
        self._lock = threading.Lock()

    def found(self, root: Path) -> Found:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(root)
        if hit is not None:
            ttl = self._ttl_s * (1 if hit[1].complete else self.FULL_TTL_FACTOR)
            if now - hit[0] < ttl:
                return hit[1]
        result = walk(root)
        if not result.complete:
            whole = walk(root, bounded=False)
            result = Found(whole.entries, whole.git_dirs, complete=False)
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
        if item.exists:  # a missing one is refused by the gate
            out.append(item)
    return out


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return within(path, roots)


@dataclass(frozen=True)
class Plan:
    """Everything the sandbox protects for one command."""

    items: tuple[Protected, ...]
    """Existing entries to bind (read-only, or a writable git directory)."""
    links: tuple[tuple[Path, str], ...]
    """Protected entries that are symlinks, with their targets (restored afterwards)."""
    gate: tuple[str, ...] = ()
    """The gate's policy (``Policy.encode``)."""
    doors: tuple[Door, ...] = ()
    watched: tuple[Watched, ...] = ()
    """The repositories whose objects, refs and index commands may write (``gitstore``)."""


def door_check(worktree: Path | None, doors: Sequence[Door]) -> IsDoor:
    """Whether a path of a work tree (relative, as git writes it) is a door: a protected
    name at any depth, or at or under one of ``doors``."""
    exact: dict[str, str] = {}
    if worktree is not None:
        for door in doors:
            for path in dict.fromkeys((door.path, Path(os.path.realpath(door.path)))):
                if path.is_relative_to(worktree) and path != worktree:
                    exact.setdefault(path.relative_to(worktree).as_posix().casefold(), door.why)

    def is_door(path: str) -> str | None:
        parts = path.casefold().split("/")
        for i, part in enumerate(parts):
            if part in SANDBOX_NAMES:
                return f"{part} is protected configuration"
            why = exact.get("/".join(parts[: i + 1]))
            if why is not None:
                return why
        return None

    return is_door


def repositories(roots: Sequence[Path], found: Sequence[Found]) -> list[Repo]:
    """Every repository whose configuration can reach into the roots: those found in them,
    and the one around each root."""
    repos: dict[Path, Repo] = {}

    def add(dot_git: Path) -> None:
        if dot_git.is_dir() and not dot_git.is_symlink():
            repos.setdefault(dot_git, Repo(dot_git, dot_git.parent))
        elif dot_git.is_file():
            named = _gitdir_of(dot_git)
            if named is not None:
                repos.setdefault(named, Repo(named, dot_git.parent))
        elif dot_git.is_dir():
            real = Path(os.path.realpath(dot_git))
            repos.setdefault(real, Repo(real, dot_git.parent))

    for root in roots:
        add(root / ".git")
        for parent in root.parents:
            if os.path.lexists(parent / ".git"):
                add(parent / ".git")
                break
    for result in found:
        for path in result.entries:
            if path.name == ".git":
                add(path)
    for result in found:
        for git_dir in result.git_dirs:
            repos.setdefault(git_dir, Repo(git_dir, None))
    return list(repos.values())


PACKAGE_NAMES = frozenset(n.casefold() for n in PACKAGE_CONFIGS)


def doors_of(
    roots: Sequence[Path],
    found: Sequence[Found],
    repos: Sequence[Repo],
    finder: DoorFinder,
    *,
    dotenv: bool,
    env: Mapping[str, str] | None = None,
) -> list[Door]:
    """What the host runs or reads on its own, inside the roots (``doors.py``), for the
    caller whose variables are ``env`` (None: this process's)."""
    doors = finder.git(repos, env)
    doors += [Door(p, "git reads it as the user's configuration") for p in user_configs(env)]
    doors += home_doors(roots, env)
    doors += home_entries(roots, env)
    entries = [p for r in found for p in r.entries]
    for root in roots:
        entries += [root / ".envrc", root / ".vscode"]
    for path in entries:
        name = path.name.casefold()
        if name == ".envrc" and path.is_file():
            doors += direnv(path)
        elif name in PACKAGE_NAMES and path.is_file():  # what a nested one names
            doors += package_configs(path.parent)
        elif name == ".vscode":
            if (path / "tasks.json").is_file():
                doors += folder_open_tasks(path / "tasks.json")
            if (path / "settings.json").is_file():
                doors += settings_programs(path / "settings.json")
    for root, result in zip(roots, found, strict=False):  # every path a door names
        doors += root_doors(root)
        for path in result.entries:
            doors += entry_doors(path, root)
    if dotenv:
        doors += [Door(root / ".env", "direnv loads it (load_dotenv)") for root in roots]
    for root in roots:
        doors += package_configs(root)
        doors += version_manager_configs(root, env)
    for venv in find_venvs(roots):
        doors += venv_doors(venv)
    for root in roots:  # the multi-root workspace VS Code may have open: tasks, settings
        doors += [Door(p, "VS Code's workspace file") for p in root.glob("*.code-workspace")]
    inside: dict[Path, Door] = {}
    for door in doors:
        real = Path(os.path.realpath(door.path))
        for path in (door.path, real):
            if _inside(path, roots) and path not in roots:
                inside.setdefault(path, Door(path, door.why))
    return list(inside.values())


def plan(
    roots: Sequence[Path],
    found: Sequence[Found],
    *,
    git_writable: bool,
    finder: DoorFinder | None = None,
    env: Mapping[str, str] | None = None,
) -> Plan:
    """What to bind read-only under the writable ``roots`` (canonical), and what the gate
    refuses to create, for the caller whose variables are ``env`` (None: this process's)."""
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
        if not os.path.lexists(path):
            return  # the gate refuses to create it
        if path.name == ".git" and path.is_dir():
            git_dirs.append(path)
            return
        if path.name == ".git" and path.is_file():
            named = _gitdir_of(path)
            if named is not None:
                git_dirs.append(named)
        items.setdefault(path, _entry(path, kind))

    for root in roots:
        for name in dict.fromkeys((*PROTECTED_DIRS, *PROTECTED_FILES)):
            protect(root / name, "dir" if name in PROTECTED_DIRS else "file")
    for result in found:
        for path in result.entries:
            protect(path, "dir")
        git_dirs += result.git_dirs
    repos = repositories(roots, found)
    dotenv = direnv_loads_dotenv(env)
    doors = (
        doors_of(roots, found, repos, finder, dotenv=dotenv, env=env) if finder is not None else []
    )
    for door in doors:
        protect(door.path, "file")
    writable: list[str] = []
    watched: list[Watched] = []
    worktrees = {Path(os.path.realpath(r.git_dir)): r.worktree for r in repos}
    for git_dir in dict.fromkeys(git_dirs):
        if _inside(git_dir, roots) and git_dir.is_dir():
            for item in git_layout(git_dir, writable=git_writable):
                items[item.path] = item
            if git_writable:
                writable.append(str(git_dir))
                worktree = worktrees.get(Path(os.path.realpath(git_dir)))
                watched.append(Watched(git_dir, worktree, door_check(worktree, doors)))
    gate = Policy.encode(
        [str(r) for r in roots],
        writable,
        [(str(d.path), d.why) for d in doors],
        sorted({*SANDBOX_NAMES, *((".env",) if dotenv else ())}),
        list(GIT_LOCKED),
        [str(p) for p in items],
    )
    return Plan(tuple(items.values()), tuple(links), tuple(gate), tuple(doors), tuple(watched))


def restore_links(links: Sequence[tuple[Path, str]], roots: Sequence[Path]) -> list[Path]:
    """Put back protected symlinks a command replaced; the replacement is renamed aside.
    Only inside ``roots``, through real folders (``host_fs``): a link the command planted
    in a parent is never followed. Returns the links that had to be restored."""
    restored: list[Path] = []
    for path, target in links:
        try:
            if restore_link(path, target, roots):
                restored.append(path)
        except OSError as e:
            log.warning("could not restore the protected link %s: %s", path, e)
    return restored
