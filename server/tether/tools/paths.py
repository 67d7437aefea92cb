"""Workspace confinement for file tools: canonicalize, then allow only known roots."""

from __future__ import annotations

import os
from pathlib import Path

from tether.errors import ToolError


def canonical(path: Path) -> Path:
    """Absolute path with ``..`` and every symlink (at any depth) resolved."""
    return Path(os.path.realpath(path))


def is_within(path: Path, roots: list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_tool_path(raw: str, cwd: Path, additional_dirs: list[Path] | None = None) -> Path:
    """Resolve a path given by the model (absolute, or relative to the workspace root).

    Raises ToolError when the canonical path leaves the workspace and the additional
    directories. The returned path is canonical.
    """
    if not raw or "\x00" in raw:
        raise ToolError("The path is empty or contains a NUL byte.")
    expanded = Path(os.path.expanduser(raw))
    candidate = expanded if expanded.is_absolute() else cwd / expanded
    resolved = canonical(candidate)
    roots = [canonical(cwd), *(canonical(d) for d in additional_dirs or [])]
    if not is_within(resolved, roots):
        raise ToolError(
            f"The path {raw} is outside the workspace ({cwd}). "
            "Only files inside the workspace can be accessed."
        )
    return resolved


def display_path(path: Path, cwd: Path) -> str:
    """A short path for titles: relative to the workspace when inside it."""
    try:
        return str(path.relative_to(canonical(cwd)))
    except ValueError:
        return str(path)
