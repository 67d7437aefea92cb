"""The protected control plane: files that decide what the agent (or the user's tools) may
run. Writing them is how a compromised command would widen its own permissions — add an
allow rule, a hook, a git hook or ``core.fsmonitor``, an editor task, an MCP server, a
direnv script — so neither the file tools nor the shell may write them unless the user
approves that exact write.

Protection is by meaning, not by path string. A path is in the control plane when, after
every symlink is resolved (the caller passes canonical paths, and the path as written):

- one of its components, at any depth below a workspace root, is a protected name
  (``.git``, ``.tether``, ``.claude``, ``.vscode``, ``.idea``, ``.mcp.json``, ``.nvim.lua``,
  ``.envrc``…) — nested repositories and nested agent settings included; or
- it lies in a directory that *is* a git directory (``HEAD``, ``objects/`` and ``refs/``):
  the one a ``.git`` file names (``gitdir: …``, as submodules, worktrees and
  ``--separate-git-dir`` repositories have), or a bare repository.

Matching ignores case: on a case-insensitive filesystem ``.TETHER`` is ``.tether``, and on
a case-sensitive one protecting a look-alike costs nothing. The shell sandbox binds the
same entries read-only and refuses to create them (``tether.sandbox.protect``).
"""

from __future__ import annotations

import os
import platform
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PROTECTED_DIRS = (".tether", ".claude", ".vscode", ".idea", ".git")
"""Directories the agent never writes into, at any depth."""
PROTECTED_FILES = (
    *(".mcp.json", ".nvim.lua", ".nvimrc", ".exrc", ".envrc", ".git"),
    *(".vimrc", ".gvimrc", ".lvimrc", ".dir-locals.el", ".dir-locals-2.el"),
    *(".tool-versions", "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml"),
    *(".rtx.toml", ".rtx.local.toml", ".mise"),
)
"""Single files the agent never writes, at any depth (``.git`` as a ``gitdir:`` file too):
agent and MCP settings, what direnv, Vim and Neovim (``exrc``) and Emacs (directory-local
variables, ``eval`` included) load from a project on their own, and what version managers'
shell hooks act on when a shell enters the folder or any below it: mise's configuration
(``[env]`` with ``_.source`` and ``exec()`` templates, ``[hooks]``, ``path:`` tools) and
asdf's ``.tool-versions`` (``path:`` versions run a program of the project as the tool)."""
_MULTIARCH = sysconfig.get_config_var("MULTIARCH") or f"{platform.machine()}-linux-gnu"
PYTHON_STARTUP = tuple(
    name
    for module in ("sitecustomize", "usercustomize")
    for name in (
        *(module, f"{module}.py", f"{module}.pyc", f"{module}.so", f"{module}.abi3.so"),
        *(
            f"{module}.cpython-3{minor}{tail}"
            for minor in range(8, 16)
            for tail in (".pyc", ".opt-1.pyc", ".opt-2.pyc", f"-{_MULTIARCH}.so")
        ),
    )
)
"""What every Python start imports on its own wherever it lies on ``sys.path`` (the
``site`` module): ``sitecustomize``/``usercustomize`` as a module, a package, bytecode
(beside the source or in ``__pycache__``) or an extension module, for CPython 3.8-3.15.
A ``.pth`` file's plain path line puts a folder on ``sys.path``, so the name is protected
everywhere, not only in ``site-packages``."""
PROTECTED_NAMES = frozenset(
    n.casefold() for n in (*PROTECTED_DIRS, *PROTECTED_FILES, *PYTHON_STARTUP)
)
GIT_LOCKED = (
    *("config", "config.worktree", "hooks", "info", "commondir", "modules", "worktrees"),
    *("rebase-merge", "rebase-apply", "sequencer"),
)
"""What stays read-only in a git directory whose objects, refs, index and logs commands may
write: everything git reads as configuration or runs (``info/attributes``, ``commondir``
pointing elsewhere, submodule and worktree configs), and the state of an interrupted
rebase, ``am``, cherry-pick or revert, whose todo list may hold ``exec`` lines that the
host's ``git rebase --continue`` runs."""


def _relative_parts(path: Path, root: Path) -> tuple[str, ...] | None:
    p, r = str(path).casefold(), str(root).casefold().rstrip("/")
    if p == r:
        return ()
    if not p.startswith(r + "/"):
        return None
    return tuple(part for part in p[len(r) + 1 :].split("/") if part)


def looks_like_git_dir(directory: Path) -> bool:
    """A git directory by its contents (what git itself checks), whatever its name."""
    return (
        os.path.isfile(directory / "HEAD")
        and os.path.isdir(directory / "objects")
        and os.path.isdir(directory / "refs")
    )


def control_plane_entry(path: Path, root: Path) -> str | None:
    """The protected entry of ``root`` that ``path`` falls under (e.g. ``.git`` or
    ``src/.claude``), or None. A path outside ``root`` is never this root's control plane."""
    parts = _relative_parts(path, root)
    if not parts:
        return None
    for i, part in enumerate(parts):
        if part in PROTECTED_NAMES:
            return "/".join(parts[: i + 1])
    ancestor = path
    for depth in range(len(parts), 0, -1):
        if looks_like_git_dir(ancestor):
            return "/".join(parts[:depth])
        ancestor = ancestor.parent
    return None


def is_control_plane(path: Path, roots: list[Path]) -> bool:
    return any(control_plane_entry(path, root) is not None for root in roots)


@dataclass(frozen=True)
class Protected:
    """One path the sandbox keeps read-only, and what it is on disk right now."""

    path: Path
    kind: Literal["dir", "file"]
    exists: bool
    writable_mount: bool = False
    """Bound read-write onto itself first: a mount point cannot be renamed away, which
    keeps the read-only entries inside it where they are."""
