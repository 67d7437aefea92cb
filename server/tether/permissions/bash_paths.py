"""Where a shell line's paths lead: checked like the file tools' paths (``tools.paths``).

Every path a command names — operands and option values it reads, redirection sources
and targets, what a file command creates, removes or copies — is made absolute against
the directory the shell will be in, ``~`` expanded, then made canonical (``..`` and every
symlink resolved) and compared with the workspace and its extra directories.

- The shell may be in any directory a ``cd`` of the line reaches: a relative path must be
  inside from every one of them (``cd`` in a subshell or a branch counts too). A relative
  ``cd`` in a loop or a function body may run any number of times, and a builtin that
  moves the shell elsewhere (``pushd``, ``source``, ``eval``…) does so unseen: after
  either, relative paths are unknown.
- A pattern is checked against every entry it could match now (each wildcard component
  read as ``*``): a superset of what bash will expand.
- A path decided at run time (``$f``, ``$(…)``) cannot be checked: it is unknown.
- A file with several hard links is treated as outside (another name may be).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tether.permissions.controlplane import PROTECTED_NAMES, is_control_plane
from tether.permissions.shell import Effects, Script, SimpleCommand, Word, command_effects
from tether.sandbox.protect import SKIPPED_DIRS, walk
from tether.tools.context import ToolContext
from tether.tools.paths import canonical, hard_links, is_within

DEVICES = frozenset(
    {"-", "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin"}
    | {"/dev/stdout", "/dev/stderr"}
)
"""Paths that are not files of anyone's (``-`` is standard input)."""
CWD_MOVERS = frozenset({"pushd", "popd", "source", ".", "eval", "exec", "builtin", "trap"})
MAX_GLOB_MATCHES = 2000


@dataclass(frozen=True)
class Seen:
    """One path as the line names it, and where it leads now."""

    text: str
    path: Path | None
    """Canonical; None when it cannot be known before the command runs."""
    written: Path | None = None
    """Absolute as written (symlinks not resolved): a name can be protected too."""
    why: str | None = None
    """Why it counts as outside although it resolves inside (several hard links)."""


@dataclass(frozen=True)
class CommandPaths:
    cmd: SimpleCommand
    effects: Effects
    reads: tuple[Seen, ...]
    writes: tuple[Seen, ...]
    """Created, changed, removed or copied onto."""
    outside: tuple[Seen, ...]
    """Paths read or written that are outside the workspace or unknown."""
    control: tuple[str, ...]
    """Written paths in the control plane, as written."""
    edit_inside: bool
    """A file command whose every path is inside and outside the control plane."""


class _Resolver:
    def __init__(self, ctx: ToolContext) -> None:
        cwd = canonical(ctx.cwd)
        self.roots = [cwd, *(canonical(d) for d in ctx.allowed_dirs)]
        self.sandbox = ctx.config.shell_sandbox
        self.env = ctx.config.caller_env
        self.cwds: list[Path] = [cwd]
        self.cwd_known = True

    def inside(self, seen: Seen) -> bool:
        return seen.path is not None and seen.why is None and is_within(seen.path, self.roots)

    def resolve(self, word: Word) -> list[Seen]:
        if word.pipe:
            return []
        value = word.value
        if value is None:
            return [Seen(word.text, None)]
        if value in DEVICES:
            return []
        if os.path.isabs(value):
            bases: list[Path | None] = [None]
        elif not self.cwd_known:
            return [Seen(word.text, None)]
        else:
            bases = list(self.cwds)
        out: list[Seen] = []
        for base in bases:
            raw = value if base is None else os.path.join(base, value)
            candidates = _expand(raw) if word.glob else [raw]
            if candidates is None:
                return [Seen(word.text, None)]
            for candidate in candidates:
                out.append(_seen(word.text, candidate))
        return out

    def follow_cds(self, commands: Iterable[tuple[SimpleCommand, Effects]]) -> None:
        """Every directory the shell may be in, over the whole line (in order)."""
        for cmd, fx in commands:
            name = cmd.words[0].value if cmd.words else None
            if name in CWD_MOVERS or (name == "command" and not fx.read_only):
                self.cwd_known = False
            target = fx.chdir
            if target is None or not self.cwd_known:
                continue
            if cmd.repeats and not os.path.isabs(target.value or ""):
                self.cwd_known = False  # `cd sub` run again goes deeper each time
                continue
            for seen in self.resolve(target):
                if seen.path is None:
                    self.cwd_known = False
                elif seen.path not in self.cwds:
                    self.cwds.append(seen.path)


def _expand(pattern: str) -> list[str] | None:
    """Every entry the pattern could match: each wildcard component read as ``*`` (as
    ``.*`` when it starts with a dot; bash matches hidden names only then, and older
    versions match ``..`` too)."""
    parts = pattern.split("/")
    broad: list[str] = []
    dotted: list[str] = []
    for part in parts:
        wild = any(c in part for c in "*?[")
        broad.append((".*" if part.startswith(".") else "*") if wild else part)
        if wild and part.startswith("."):
            dotted.append("/".join([*broad[:-1], ".."]))
    found: list[str] = list(dotted)
    for match in glob.iglob("/".join(broad)):
        found.append(match)
        if len(found) > MAX_GLOB_MATCHES:
            return None
    return found or [pattern]  # no match: bash passes the pattern as it is


def _seen(text: str, raw: str) -> Seen:
    written = Path(os.path.normpath(raw))
    path = canonical(written)
    count = hard_links(path)
    why = f"{text} has {count} hard links (another name may be outside)" if count > 1 else None
    return Seen(text, path, written, why)


def _holds_control_plane(directory: Path) -> bool | None:
    """Would removing or moving ``directory`` take protected entries with it? None when
    the tree is too large to tell."""
    if directory.name in SKIPPED_DIRS or not directory.is_dir() or directory.is_symlink():
        return False
    found = walk(directory)
    if found.git_dirs or found.entries:
        return True
    try:
        if any(e.casefold() in PROTECTED_NAMES for e in os.listdir(directory)):
            return True
    except OSError:
        return None
    return False if found.complete else None


def line_paths(script: Script, ctx: ToolContext) -> list[CommandPaths]:
    """Every subcommand with its paths resolved."""
    resolver = _Resolver(ctx)
    env = ctx.config.caller_env  # the caller's shell runs it, not this process's
    pairs = [(cmd, command_effects(cmd, script, env)) for cmd in script.commands]
    resolver.follow_cds(pairs)
    return [_command_paths(resolver, cmd, fx) for cmd, fx in pairs]


def _command_paths(resolver: _Resolver, cmd: SimpleCommand, fx: Effects) -> CommandPaths:
    roots = resolver.roots
    reads = [s for w in fx.reads for s in resolver.resolve(w)]
    writes = [s for w in fx.writes for s in resolver.resolve(w)]
    removes = [s for w in fx.removes for s in resolver.resolve(w)]
    for source, dest in fx.copies:
        for target in resolver.resolve(dest):
            if target.path is not None and target.path.is_dir() and source.value is not None:
                name = os.path.basename(source.value.rstrip("/"))
                writes += resolver.resolve(Word.literal(os.path.join(dest.value or "", name)))
    changed = [*writes, *removes]
    sandbox = resolver.sandbox
    control = [
        s.text
        for s in changed
        if (s.path is not None and is_control_plane(s.path, roots))
        or (s.written is not None and is_control_plane(s.written, roots))
        or (
            sandbox is not None
            and any(sandbox.door(p, resolver.env) for p in (s.path, s.written) if p)
        )
    ]
    removal_ok = True
    for seen in removes:
        if seen.path is None or any(r == seen.path or r.is_relative_to(seen.path) for r in roots):
            removal_ok = False  # never the workspace itself or what holds it
            continue
        holds = _holds_control_plane(seen.path)
        if holds:
            control.append(seen.text)
        removal_ok = removal_ok and holds is False
    outside = [s for s in (*reads, *changed) if not resolver.inside(s)]
    edit_inside = fx.file_command and not outside and not control and removal_ok
    return CommandPaths(
        cmd, fx, tuple(reads), tuple(changed), tuple(outside), tuple(control), edit_inside
    )
