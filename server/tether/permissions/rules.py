"""Permission rules in Claude Code's syntax: ``Tool`` or ``Tool(spec)``.

Bash(npm run test:*)   prefix (word boundary) of every subcommand
Bash(git * main)       ``*`` wildcard anywhere
Read(./secrets/**)     gitignore-style path pattern (``//abs``, ``~/home``, ``/root-rel``)
Edit(/src/**/*.ts)     Edit rules also cover Write and NotebookEdit
WebFetch(domain:x.io)  ``*.x.io`` matches subdomains only
mcp__server[__tool]    every tool of a server, or one
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_*-]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)
EDIT_FAMILY = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})
READ_FAMILY = frozenset({"Read", "Glob", "Grep"})


@dataclass(frozen=True)
class Rule:
    tool: str
    spec: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        m = _RULE.match(text.strip())
        if m is None:
            raise ValueError(f"not a permission rule: {text!r} (expected Tool or Tool(spec))")
        spec = m.group("spec")
        return cls(m.group("tool"), spec if spec not in (None, "", "*") else None)

    def __str__(self) -> str:
        return self.tool if self.spec is None else f"{self.tool}({self.spec})"


@dataclass(frozen=True)
class Subject:
    """What a call looks like to the rules: the tool's name and its rule content."""

    tool: str
    content: str | None
    cwd: Path
    home: Path | None = None
    """Where ``~/`` rules point: the caller's home (None: this process's)."""


def tool_matches(rule: Rule, tool: str) -> bool:
    if rule.tool == tool or rule.tool == "*":
        return True
    if rule.tool in ("Edit",) and tool in EDIT_FAMILY:
        return True
    if rule.tool == "Read" and tool in READ_FAMILY:
        return True
    if rule.tool.startswith("mcp__") and tool.startswith("mcp__"):
        server_rule = rule.tool.removesuffix("__*")
        return tool == server_rule or tool.startswith(server_rule + "__")
    return False


NAMED_SPECS = frozenset({"Skill", "Agent"})
"""Tools whose rule spec is a name (``Skill(deploy)``, ``Agent(explore)``), not a path."""


def matches(rule: Rule, subject: Subject) -> bool:
    """Does ``rule`` cover this (non-Bash) call?"""
    if not tool_matches(rule, subject.tool):
        return False
    if rule.spec is None:
        return True
    if subject.content is None:
        return False
    if subject.tool == "Bash":
        return False  # Bash specs are matched per subcommand by bash_rules
    if subject.tool in NAMED_SPECS:
        return fnmatch.fnmatchcase(subject.content, rule.spec)
    if rule.spec.startswith("domain:"):
        return domain_matches(rule.spec.removeprefix("domain:"), subject.content)
    return path_matches(rule.spec, Path(subject.content), subject.cwd, subject.home)


def url_host(url_or_host: str) -> str:
    """The host of a URL (or a bare host), lower-cased, without credentials or port."""
    rest = re.sub(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", "", url_or_host.strip())
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    if authority.startswith("["):
        return authority[1:].split("]")[0].lower()
    return authority.split(":")[0].lower()


def domain_matches(pattern: str, url_or_host: str) -> bool:
    host = url_host(url_or_host)
    pattern = pattern.lower()
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def path_matches(spec: str, path: Path, cwd: Path, home: Path | None = None) -> bool:
    """gitignore-style match with Claude Code's anchors (``~/``: ``home``, None: this
    process's)."""
    if spec.startswith("//"):
        base, pattern = Path("/"), spec[2:]
    elif spec.startswith("~/"):
        base, pattern = home or Path.home(), spec[2:]
    elif spec.startswith("/"):
        base, pattern = cwd, spec[1:]
    else:
        base, pattern = cwd, spec.removeprefix("./")
    try:
        rel = path.relative_to(os.path.realpath(base))
    except ValueError:
        try:
            rel = path.relative_to(base)
        except ValueError:
            return False
    return _gitignore(pattern).match_file(rel.as_posix())


@lru_cache(maxsize=1024)
def _gitignore(pattern: str) -> pathspec.GitIgnoreSpec:
    import pathspec  # about 8 ms: only when a path rule is first matched

    return pathspec.GitIgnoreSpec.from_lines([pattern])
