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


def _long(rest: Sequence[str], *names: str) -> bool:
    """Is one of these long options given, under any prefix git accepts for it?"""
    for arg in rest:
        if arg == "--":
            return False
        name = arg[2:].split("=", 1)[0] if arg.startswith("--") else ""
        if name and any(n.startswith(name) for n in names):
            return True
    return False


def _short(rest: Sequence[str], letters: str) -> bool:
    for arg in rest:
        if arg == "--":
            return False
        if arg.startswith("-") and not arg.startswith("--") and any(c in arg[1:] for c in letters):
            return True
    return False


def _destructive(sub: str, rest: list[str]) -> bool:
    if sub == "reset":
        return _long(rest, "hard", "merge", "keep")
    if sub == "checkout":
        return "--" in rest or "." in rest or _short(rest, "f") or _long(rest, "force")
    if sub == "switch":
        return _short(rest, "fC") or _long(rest, "force", "discard-changes", "force-create")
    if sub == "restore":
        staged_only = (_long(rest, "staged") or _short(rest, "S")) and not (
            _long(rest, "worktree") or _short(rest, "W")
        )
        return not staged_only
    if sub == "clean":
        return _short(rest, "f") or _long(rest, "force")
    if sub == "push":
        forced = _long(rest, "force", "force-with-lease", "force-if-includes", "mirror", "delete")
        refspecs = any(a.startswith(("+", ":")) for a in rest)
        return forced or _long(rest, "prune") or _short(rest, "fd") or refspecs
    if sub == "stash":
        return bool(rest) and rest[0] in ("drop", "clear")
    if sub == "branch":
        deleting = _long(rest, "delete") or _short(rest, "d")
        return _short(rest, "D") or (deleting and (_long(rest, "force") or _short(rest, "f")))
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
