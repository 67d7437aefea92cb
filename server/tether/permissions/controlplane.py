"""The protected control plane: files that decide what the agent (or the user's tools) may
run. Writing them is how a compromised command would widen its own permissions — add an
allow rule, a hook, a git hook, an editor task or an MCP server — so neither the file tools
nor the shell sandbox may write them unless the user approves that exact write.

One list serves both: ``is_control_plane`` for Edit/Write and shell redirections, and
``protected_paths`` for the paths the sandbox re-binds read-only inside the workspace.
Matching ignores case: on a case-insensitive filesystem ``.TETHER`` is ``.tether``, and on
a case-sensitive one protecting a look-alike costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PROTECTED_DIRS = (".tether", ".claude", ".vscode", ".idea", ".git")
"""Directories the agent never writes into (relative to a workspace root). All of ``.git``:
besides hooks and config, git also follows ``.git/commondir`` and submodule configs, and a
planted one runs programs the next time the user's editor runs git."""
PROTECTED_FILES = (".mcp.json", ".nvim.lua", ".nvimrc", ".exrc")
"""Single files the agent never writes."""
GIT_EXECUTABLE = (".git/hooks", ".git/config")
"""What stays read-only when the user lets sandboxed commands write ``.git`` (commits)."""


def _relative_parts(path: Path, root: Path) -> tuple[str, ...] | None:
    p, r = str(path).casefold(), str(root).casefold().rstrip("/")
    if p == r:
        return ()
    if not p.startswith(r + "/"):
        return None
    return tuple(part for part in p[len(r) + 1 :].split("/") if part)


def control_plane_entry(path: Path, root: Path) -> str | None:
    """The protected entry ``path`` falls under (e.g. ``.git``), or None.

    ``path`` must be canonical; a path outside ``root`` is never this root's control plane.
    """
    parts = _relative_parts(path, root)
    if not parts:
        return None
    return next((e for e in (*PROTECTED_DIRS, *PROTECTED_FILES) if parts[0] == e), None)


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


def _entry(path: Path, kind: Literal["dir", "file"]) -> Protected:
    exists = path.exists() or path.is_symlink()
    if exists:
        kind = "dir" if path.is_dir() else "file"
    return Protected(path, kind, exists)


def protected_paths(root: Path, *, git_writable: bool = False) -> list[Protected]:
    """What the shell sandbox re-binds read-only inside ``root``.

    With ``git_writable`` (commits from the sandbox), a ``.git`` directory is bound
    read-write onto itself (so it cannot be swapped for a planted one) and only its hooks
    and config are locked; that leaves ``.git/commondir`` and submodule configs writable,
    which is why it is not the default.
    """
    out = [_entry(root / e, "dir") for e in PROTECTED_DIRS if e != ".git"]
    out += [_entry(root / e, "file") for e in PROTECTED_FILES]
    git = root / ".git"
    if git_writable and git.is_dir() and not git.is_symlink():
        out.append(Protected(git, "dir", True, writable_mount=True))
        out += [_entry(root / e, "dir" if e.endswith("hooks") else "file") for e in GIT_EXECUTABLE]
    else:
        out.append(_entry(git, "dir"))
    return out
