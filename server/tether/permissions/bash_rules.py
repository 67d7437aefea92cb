"""Bash rules, applied to every simple command a command line would run.

Allow and deny read a command differently, on purpose:

- **deny / ask** look for the worst reading. A subcommand is matched as written, with its
  ``VAR=`` prefix dropped, with every wrapper peeled off (``env``, ``command``, ``exec``,
  ``sudo``, ``nice``, ``timeout``, ``xargs``…), with its program's directory dropped
  (``/usr/bin/curl``), and through ``sh -c``/``bash -c``/``eval`` into the script they run.
  A command whose program cannot be known (``$X args``, unparseable text) cannot be proved
  clear of a deny rule, so it is reported as unknown.
- **allow** needs every subcommand covered. Only harmless wrappers are peeled (``timeout``,
  ``nice``…); a ``VAR=`` prefix stays part of the text (``LD_PRELOAD=x npm test`` is not
  ``npm test``); a prefix or wildcard rule does not cover a command that runs or writes
  something named in its arguments (``find -exec``, ``git -c core.pager=…``, ``xargs``),
  nor one with a dynamic program name; redirections that write anything but /dev/null
  need the user. An exact rule approves exactly that command line.

Matching is on words, not on joined text, and rules are indexed by their first word, so a
line of 20 subcommands against a few hundred rules stays well under a millisecond.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from tether.permissions.bash_programs import (
    BENIGN_WRAPPERS,
    EVERY_WRAPPER,
    SHELLS,
    runs_through_args,
    strip_wrappers,
)
from tether.permissions.rules import Rule, tool_matches
from tether.permissions.shell import Script, SimpleCommand, Word, parse_command, parse_script
from tether.permissions.shell.effects import SINKS

_DYNAMIC = re.compile(r"[$`*?\[]")
Unknown = Literal["unknown"]


@dataclass(frozen=True)
class _Spec:
    rule: Rule
    words: tuple[str, ...]
    kind: Literal["exact", "prefix", "wildcard"]
    regex: re.Pattern[str] | None = None

    def matches(self, words: Sequence[str]) -> bool:
        if self.kind == "exact":
            return tuple(words) == self.words
        if self.kind == "prefix":
            return tuple(words[: len(self.words)]) == self.words
        assert self.regex is not None
        return self.regex.match(" ".join(words)) is not None


@dataclass
class _Index:
    bare: Rule | None = None
    by_first: dict[str, list[_Spec]] = field(default_factory=lambda: dict[str, list[_Spec]]())
    wild: list[_Spec] = field(default_factory=lambda: list[_Spec]())
    exact_lines: dict[str, Rule] = field(default_factory=lambda: dict[str, Rule]())
    """Exact rules by their text: such a rule approves that command line, as written."""

    def candidates(self, words: Sequence[str]) -> Iterator[_Spec]:
        if words:
            yield from self.by_first.get(words[0], ())
        yield from self.wild

    def first_match(self, words: Sequence[str]) -> _Spec | None:
        return next((s for s in self.candidates(words) if s.matches(words)), None)


def _spec(rule: Rule) -> _Spec:
    text = " ".join((rule.spec or "").split())
    if text.endswith(":*"):
        return _Spec(rule, tuple(text[:-2].split()), "prefix")
    if "*" in text:
        # `Bash(ls *)` keeps the word boundary: "ls -la" matches, "lsof" does not.
        return _Spec(rule, tuple(text.split()), "wildcard", re.compile(fnmatch.translate(text)))
    return _Spec(rule, tuple(text.split()), "exact")


@lru_cache(maxsize=64)
def _index(rules: tuple[Rule, ...]) -> _Index:
    index = _Index()
    for rule in rules:
        if not tool_matches(rule, "Bash"):
            continue
        if rule.spec is None:
            index.bare = index.bare or rule
            continue
        spec = _spec(rule)
        if spec.kind == "exact":
            index.exact_lines.setdefault(rule.spec.strip(), rule)
        if spec.words and "*" not in spec.words[0]:
            index.by_first.setdefault(spec.words[0], []).append(spec)
        else:
            index.wild.append(spec)
    return index


def peel(cmd: SimpleCommand) -> list[str] | None:
    """The program and its arguments, every wrapper peeled off; None when a wrapper's
    arguments cannot be read."""
    words = strip_wrappers(cmd.words, EVERY_WRAPPER)
    return None if words is None else [w.text for w in words]


def allow_words(cmd: SimpleCommand) -> list[Word] | None:
    """A subcommand as allow rules see it: harmless wrappers peeled."""
    return strip_wrappers(cmd.words, BENIGN_WRAPPERS)


Readings = tuple[tuple[str, ...], ...]


@lru_cache(maxsize=2048)  # a line is decided on every call; its subcommands repeat
def deny_readings(cmd: SimpleCommand, depth: int = 0) -> Readings | Unknown:
    """Every way deny/ask rules must read one subcommand, nested shells included."""
    argv = list(cmd.argv)
    peeled = peel(cmd)
    if peeled is None:
        return "unknown"
    readings = [argv, peeled]
    for words in (argv, peeled):
        if words and "/" in words[0]:
            readings.append([os.path.basename(words[0]), *words[1:]])
    if peeled and _DYNAMIC.search(peeled[0]):
        return "unknown"
    if peeled:
        readings += _find_exec_commands(peeled)
        peeled_words = strip_wrappers(cmd.words, EVERY_WRAPPER) or []
        if os.path.basename(peeled[0]) == "git" and runs_through_args(peeled_words):
            return "unknown"  # -c core.pager=…, --exec-path…: what it runs is in a value
    nested = _nested_script(peeled) if peeled else None
    if nested is not None:
        if depth >= 3:
            return "unknown"
        inner = parse_command(nested)
        if inner is None:
            return "unknown"
        for sub in inner:
            more = deny_readings(sub, depth + 1)
            if more == "unknown":
                return "unknown"
            readings.extend(list(m) for m in more)
    return tuple(tuple(r) for r in readings)


def _find_exec_commands(words: list[str]) -> list[list[str]]:
    """The commands ``find -exec CMD… ;`` (and -execdir, -ok, -okdir) would run."""
    if os.path.basename(words[0]) != "find":
        return []
    found: list[list[str]] = []
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(words)) if words[j] in (";", "+")), len(words))
            found.append(words[i + 1 : end])
            i = end
        i += 1
    return [f for f in found if f]


def _nested_script(words: list[str]) -> str | None:
    name = os.path.basename(words[0])
    if name == "eval":
        return " ".join(words[1:])
    if name == "trap":  # the handler runs later, as shell code
        operands = [w for w in words[1:] if not w.startswith("-")]
        return operands[0] if operands else None
    if name in SHELLS:
        for i, word in enumerate(words[1:], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                return words[i + 1] if i + 1 < len(words) else ""
    return None


def writes_by_redirect(cmd: SimpleCommand) -> bool:
    """Does the command write a file through a redirection (``2>&1`` and ``>/dev/null``
    do not)?"""
    return any(
        r.writes and r.target is not None and r.target.value not in SINKS for r in cmd.redirects
    )


def match_any(rules: Sequence[Rule], command: str) -> Rule | Unknown | None:
    """For deny and ask: a rule matching the whole line or any reading of any subcommand;
    "unknown" when some subcommand cannot be read, or the line can run code no subcommand
    shows, and a Bash rule with a spec exists."""
    index = _index(tuple(rules))
    if index.bare is not None:
        return index.bare
    if not index.by_first and not index.wild:
        return None
    whole = command.split()
    hit = index.first_match(whole)
    if hit is not None:
        return hit.rule
    script = parse_script(command)
    if script is None or script.hazard is not None:
        return "unknown"
    unknown = False
    for cmd in script.commands:
        readings = deny_readings(cmd)
        if readings == "unknown":
            unknown = True
            continue
        for words in readings:
            hit = index.first_match(words)
            if hit is not None:
                return hit.rule
    return "unknown" if unknown else None


def exact_line(rules: Sequence[Rule], command: str) -> Rule | None:
    """A bare ``Bash`` rule, or an exact rule approving this command line as written."""
    index = _index(tuple(rules))
    return index.bare or index.exact_lines.get(command.strip())


def covering_rules(rules: Sequence[Rule], commands: Sequence[SimpleCommand]) -> list[Rule | None]:
    """The allow rule covering each subcommand (None where none does)."""
    index = _index(tuple(rules))
    return [_covering(index, cmd) for cmd in commands]


def covering_rule(rules: Sequence[Rule], cmd: SimpleCommand) -> Rule | None:
    """The allow rule that covers one subcommand, if one does."""
    return _covering(_index(tuple(rules)), cmd)


def _covering(index: _Index, cmd: SimpleCommand) -> Rule | None:
    if index.bare is not None:
        return index.bare
    program = allow_words(cmd)
    if not program or _DYNAMIC.search(program[0].text) or program[0].value is None:
        return None
    if writes_by_redirect(cmd) or runs_through_args(program):
        return None
    hit = index.first_match([*cmd.assignments, *(w.text for w in program)])
    return None if hit is None else hit.rule


def match_all(rules: Sequence[Rule], command: str, script: Script | None = None) -> Rule | None:
    """For allow: the rule that covers the command line, if every subcommand is covered."""
    exact = exact_line(rules, command)
    if exact is not None:
        return exact
    script = script or parse_script(command)
    if script is None or script.hazard is not None or not script.commands:
        return None
    hits = covering_rules(rules, script.commands)
    if any(hit is None for hit in hits):
        return None
    return hits[0]
