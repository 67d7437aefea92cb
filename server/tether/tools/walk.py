"""The gitignore-aware walk Glob's fallback and Grep's fallback share.

Ignore rules follow ripgrep's reading of them (so both Grep backends agree): ignore files are
read from every ancestor of the search root and from every directory walked into; a deeper
file's decision beats a shallower one's; ``.gitignore`` files above a repository root (a
directory holding ``.git``) do not apply; ``.rgignore`` beats ``.ignore`` beats ``.gitignore``.
Ignored directories are pruned, so nothing under them can be re-included (as in git).

It imports little: Grep's fallback runs in a child interpreter that loads it on every call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from tether.core.files import read_regular

Prefilter = Callable[[str, bool], bool | None]
"""(path relative to the walk root, is_dir) -> True keep regardless, False drop, None: rules."""


@dataclass(frozen=True)
class WalkedFile:
    path: Path
    rel: str
    """Relative to the walk root, with ``/`` separators."""
    mtime: float


@dataclass(frozen=True)
class _Level:
    directory: Path
    specs: dict[str, GitIgnoreSpec]
    has_git: bool


def _load_level(directory: Path, names: tuple[str, ...], has_git: bool) -> _Level:
    specs: dict[str, GitIgnoreSpec] = {}
    for name in names:
        try:
            text = read_regular(directory / name).decode("utf-8", "replace")
            specs[name] = GitIgnoreSpec.from_lines(text.splitlines())
        except OSError:
            continue
    return _Level(directory, specs, has_git)


def _ignored(levels: list[_Level], names: tuple[str, ...], path: Path, is_dir: bool) -> bool:
    for name in names:
        for level in reversed(levels):
            spec = level.specs.get(name)
            if spec is not None:
                rel = path.relative_to(level.directory).as_posix() + ("/" if is_dir else "")
                decision = spec.check_file(rel).include
                if decision is not None:
                    return decision
            if name == ".gitignore" and level.has_git:
                break  # ignore files above the repository root are not the repository's
    return False


def walk_files(
    root: Path,
    *,
    ignore_names: tuple[str, ...] = (".gitignore",),
    prefilter: Prefilter | None = None,
    file_filter: Callable[[str], bool] | None = None,
    include_symlinks: bool = True,
) -> Iterator[WalkedFile]:
    """Files under ``root`` that the ignore rules keep (blocking: run it in a thread).

    ``prefilter`` runs first and can force a decision (ripgrep's ``--glob`` overrides);
    ``file_filter`` sees the file name of files the rules kept (ripgrep's ``--type``).
    Symlinked directories are never followed; symlinked files are kept only on request.
    """
    levels = [_load_level(d, ignore_names, (d / ".git").exists()) for d in reversed(root.parents)]
    yield from _walk(root, root, levels, ignore_names, prefilter, file_filter, include_symlinks)


def _walk(
    root: Path,
    directory: Path,
    levels: list[_Level],
    names: tuple[str, ...],
    prefilter: Prefilter | None,
    file_filter: Callable[[str], bool] | None,
    include_symlinks: bool,
) -> Iterator[WalkedFile]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    has_git = any(e.name == ".git" for e in entries)
    levels = [*levels, _load_level(directory, names, has_git)]
    for entry in entries:
        path = Path(entry.path)
        rel = path.relative_to(root).as_posix()
        is_link = entry.is_symlink()
        if is_link and not include_symlinks:
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        forced = prefilter(rel, is_dir) if prefilter is not None else None
        if forced is False:
            continue
        if forced is None and _ignored(levels, names, path, is_dir):
            continue
        if is_dir:
            yield from _walk(root, path, levels, names, prefilter, file_filter, include_symlinks)
            continue
        if forced is None and file_filter is not None and not file_filter(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError:
            continue  # dangling symlink, or the file vanished mid-walk
        if entry.is_file(follow_symlinks=True):
            yield WalkedFile(path, rel, st.st_mtime)
