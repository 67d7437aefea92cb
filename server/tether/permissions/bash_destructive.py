"""Git commands that discard work git cannot give back: they always ask."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

from tether.permissions.bash_rules import deny_readings, peel
from tether.permissions.shell import parse_command

_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _git_subcommand(words: Sequence[str]) -> tuple[str, list[str]] | None:
    if not words or os.path.basename(words[0]) != "git":
        return None
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _GIT_VALUE_OPTIONS else 1
    return (words[i], list(words[i + 1 :])) if i < len(words) else None


def _forced_push(rest: list[str]) -> bool:
    forced = ("force", "force-with-lease", "force-if-includes", "mirror", "delete", "prune")
    for arg in rest:
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if name and any(f.startswith(name) for f in forced) and len(name) >= 2:
                return True
        elif arg.startswith("-") and any(c in arg[1:] for c in "fd"):
            return True
        elif arg.startswith("+") or arg.startswith(":"):
            return True  # +refspec forces, :ref deletes
    return False


def _destructive(sub: str, rest: list[str]) -> bool:
    opts = [a for a in rest if a.startswith("-")]
    if sub == "reset":
        return any(a.split("=", 1)[0] in ("--hard", "--merge", "--keep") for a in rest)
    if sub == "checkout":
        return "--" in rest or "." in rest or "-f" in opts or "--force" in opts
    if sub == "switch":
        return any(o in ("-f", "--force", "--discard-changes", "-C") for o in opts)
    if sub == "restore":
        return "--staged" not in rest or "--worktree" in rest
    if sub == "clean":
        return any(o == "--force" or (not o.startswith("--") and "f" in o) for o in opts)
    if sub == "push":
        return _forced_push(rest)
    if sub == "stash":
        return bool(rest) and rest[0] in ("drop", "clear")
    if sub == "branch":
        return "-D" in opts or ("--delete" in opts and "--force" in opts)
    return sub in ("filter-branch", "filter-repo")


@lru_cache(maxsize=512)  # asked for every call of a line, which does not change
def is_destructive_git(command: str) -> bool:
    """Does the line discard work git cannot give back (reset --hard, clean -f, push -f…)?"""
    for cmd in parse_command(command) or []:
        readings = deny_readings(cmd)
        peeled = peel(cmd)
        candidates: list[Sequence[str]] = [peeled] if peeled is not None else []
        candidates += readings if readings != "unknown" else []
        for words in candidates:
            found = _git_subcommand(words)
            if found is not None and _destructive(*found):
                return True
    return False
