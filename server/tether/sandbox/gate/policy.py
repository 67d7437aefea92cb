"""What the gate refuses to bring into existence, decided on canonical paths.

The daemon computes the policy (``tether.sandbox.protect``) and hands it over as a flat
list of strings (``encode``), on the command line or on standard input: no path can hold
a NUL, and every other character passes either way. Under a writable root the gate refuses:

- an entry at a path the host would read or run (``exact``: a hooks folder a repository
  names, an included config file, a script a git key runs), and, by rename, link or
  symlink, at one of their ancestors (that would put a folder's contents in place at once);
- inside a git directory the command may write (objects, refs, index), only the names git
  reads as configuration or runs (``locked``: ``config``, ``hooks``…, at its top);
- anywhere else, an entry with a protected name at any depth (``names``: ``.git``,
  ``.vscode``, ``.envrc``…);
- the entry that would make a directory a git directory by its contents: ``HEAD`` with
  ``objects`` and ``refs`` (or with ``commondir``), whatever the directory is called;
- moving a directory that holds any of the above (``holds``): a repository or an editor's
  settings under a new name are still control plane, and one that was out of the
  sandbox's sight (in ``node_modules``, say) would come into view with whatever the
  command wrote into it there. A tree too large to look through is refused too.

Names compare without case: on a case-insensitive filesystem ``.GIT`` is ``.git``.
"""

from __future__ import annotations

import os

MAX_SCAN = 20_000
"""Entries looked at in a directory about to be moved."""
MARKERS = ("HEAD", "objects", "refs", "commondir")
"""What git looks for to tell that a directory is a git directory (setup.c)."""
_MARKERS_FOLDED = {m.casefold(): m for m in MARKERS}


def _fold(path: str) -> str:
    return path.casefold()


def _under(path: str, top: str) -> bool:
    return path == top or top == "/" or path.startswith(top + "/")


class Policy:
    __slots__ = ("ancestors", "bound", "exact", "gitdirs", "locked", "names", "roots")

    def __init__(self) -> None:
        self.roots: list[str] = []
        self.gitdirs: list[str] = []
        self.exact: dict[str, str] = {}
        """Protected path (case-folded) -> why, in words for the model."""
        self.ancestors: dict[str, str] = {}
        """An ancestor of a protected path inside a root (case-folded) -> that path."""
        self.names: set[str] = set()
        self.locked: set[str] = set()
        self.bound: set[str] = set()
        """Protected entries the sandbox binds (case-folded): seen to, wherever they are."""

    @staticmethod
    def encode(
        roots: list[str],
        gitdirs: list[str],
        exact: list[tuple[str, str]],
        names: list[str],
        locked: list[str],
        bound: list[str] | None = None,
    ) -> list[str]:
        out: list[str] = []
        for root in roots:
            out += ["root", root]
        for gitdir in gitdirs:
            out += ["gitdir", gitdir]
        for path, why in exact:
            out += ["exact", path, why]
        for name in names:
            out += ["name", name]
        for name in locked:
            out += ["locked", name]
        for path in bound or []:
            out += ["bound", path]
        return out

    @classmethod
    def parse(cls, tokens: list[str]) -> tuple[Policy, list[str]]:
        """The policy and what follows its closing ``--`` (the command)."""
        policy = cls()
        i = 0
        while i < len(tokens) and tokens[i] != "--":
            kind = tokens[i]
            if kind == "root":
                policy.roots.append(tokens[i + 1])
            elif kind == "gitdir":
                policy.gitdirs.append(tokens[i + 1])
            elif kind == "exact":
                policy.exact[_fold(tokens[i + 1])] = tokens[i + 2]
                i += 1
            elif kind == "name":
                policy.names.add(_fold(tokens[i + 1]))
            elif kind == "locked":
                policy.locked.add(_fold(tokens[i + 1]))
            elif kind == "bound":
                policy.bound.add(_fold(tokens[i + 1]))
            else:
                raise ValueError(f"unknown policy entry {kind!r}")
            i += 2
        for path in list(policy.exact):
            parent = os.path.dirname(path)
            while parent != path and any(_under(parent, _fold(r)) for r in policy.roots):
                if any(parent == _fold(r) for r in policy.roots):
                    break
                policy.ancestors.setdefault(parent, path)
                path, parent = parent, os.path.dirname(parent)
        return policy, tokens[i + 1 :]

    def refusal(self, path: str, dir_fd: int, name: str, *, brings: bool) -> str | None:
        """Why creating ``path`` (the entry ``name`` in the directory ``dir_fd``) is refused,
        or None. ``brings``: by rename, link or symlink (it may carry contents along)."""
        root = next((r for r in self.roots if _under(path, r)), None)
        if root is None or path == root:
            return None
        folded = _fold(path)
        why = self.exact.get(folded)
        if why is not None:
            return why
        if brings and folded in self.ancestors:
            return f"it would put {self.ancestors[folded]} in place, which is protected"
        gitdir = next((g for g in self.gitdirs if _under(path, g) and path != g), None)
        if gitdir is not None:
            first = path[len(gitdir) + 1 :].split("/", 1)[0]
            if _fold(first) in self.locked:
                return f"{first} in the git directory {gitdir} is read-only (git reads or runs it)"
            if (
                first.endswith(".lock")
                and _fold(first[:-5]) in self.locked
                and "/" not in path[len(gitdir) + 1 :]
            ):
                # git's lock beside a read-only file: it could never be renamed onto it, and
                # left behind it would keep the host's git from changing that file.
                return f"{first[:-5]} in the git directory {gitdir} is read-only, so is its lock"
            return None
        for part in path[len(root) + 1 :].split("/"):
            if _fold(part) in self.names:
                return f"{part} is protected configuration (git, editors, agents, direnv)"
        marker = _MARKERS_FOLDED.get(_fold(name))
        if marker is not None and _completes_git_dir(dir_fd, marker):
            parent = os.path.dirname(path)
            return f"{parent} would become a git directory (HEAD with objects and refs)"
        return None

    def holds(self, path: str, dir_fd: int, name: str, *, linking: bool = False) -> str | None:
        """Why moving the directory ``path`` (``name`` in ``dir_fd``) is refused, or None.
        ``linking``: a symlink to it is being made; what the sandbox binds is seen to
        wherever it is reached from, and a tree too large to look through is let be."""
        if not any(_under(path, r) for r in self.roots):
            return None
        if any(_under(path, g) and path != g for g in self.gitdirs):
            return None  # git's own work inside a git directory
        budget = MAX_SCAN
        stack = [(os.open(name, _SCAN, dir_fd=dir_fd), path)]
        try:
            while stack:
                fd, here = stack.pop()
                try:
                    why = self._look(fd, here, stack, budget, linking)
                finally:
                    os.close(fd)
                if isinstance(why, str):
                    return None if linking and why.endswith(_TOO_LARGE) else why
                budget = why
        finally:
            for fd, _ in stack:
                os.close(fd)
        return None

    def _look(
        self, fd: int, here: str, stack: list[tuple[int, str]], budget: int, linking: bool
    ) -> str | int:
        """Why the directory ``fd`` (at ``here``) is protected, or what is left of the
        budget; its subdirectories are pushed on ``stack``."""
        with os.scandir(fd) as it:
            entries = list(it)
        budget -= len(entries)
        if budget < 0:
            return f"{here} {_TOO_LARGE}"
        names = {e.name for e in entries}
        git_dir = {"HEAD", "objects", "refs"} <= names or {"HEAD", "commondir"} <= names
        if git_dir and not (linking and _fold(here) in self.bound):
            return f"it holds {here}, a git directory"
        for entry in entries:
            inner = f"{here}/{entry.name}"
            if linking and _fold(inner) in self.bound:
                continue
            why = self.exact.get(_fold(inner))
            if why is not None:
                return f"it holds {inner}: {why}"
            if _fold(entry.name) in self.names:
                return f"it holds {inner}, protected configuration"
            if entry.is_dir(follow_symlinks=False):
                stack.append((os.open(entry.name, _SCAN, dir_fd=fd), inner))
        return budget


_TOO_LARGE = "is too large to check for protected configuration inside"
_SCAN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _completes_git_dir(dir_fd: int, adding: str) -> bool:
    present = {adding}
    for marker in MARKERS:
        if marker != adding:
            try:
                os.lstat(marker, dir_fd=dir_fd)
            except OSError:
                continue
            present.add(marker)
    return "HEAD" in present and ({"objects", "refs"} <= present or "commondir" in present)
