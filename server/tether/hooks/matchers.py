"""Which configured hooks run for an event, with Claude Code's matcher semantics.

A matcher that is missing, ``""`` or ``*`` matches everything. One made only of letters,
digits, ``_``, ``-``, spaces, ``|`` and ``,`` is a list of exact names split on ``|`` and
``,`` with spaces trimmed (``Edit|Write``, ``Read | Bash``, ``Read,mcp__calc__add``), as
Claude Code 2.1 reads it; so ``mcp__calc`` names no tool. Anything else is an unanchored
regular expression (``mcp__.*``, ``Notebook.*``, ``mcp__calc__*``); one that does not compile
matches nothing (said in the log). Events without a subject (UserPromptSubmit, Stop...)
ignore matchers. The same command configured twice runs once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from tether.settings.model import HookCommand, HookEvent, HookMatcher

log = logging.getLogger(__name__)

_PLAIN_LIST = re.compile(r"^[A-Za-z0-9_|, -]+$")
_SEPARATORS = re.compile(r"[|,]")


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error as e:
        log.warning(
            "hook matcher %r is not a valid regular expression (%s); it matches nothing", pattern, e
        )
        return None


def matcher_matches(matcher: str | None, subject: str | None) -> bool:
    if subject is None or not matcher or matcher == "*":
        return True
    if _PLAIN_LIST.match(matcher):
        return subject in {name.strip() for name in _SEPARATORS.split(matcher)} - {""}
    regex = _regex(matcher)
    return regex is not None and regex.search(subject) is not None


def select(
    config: Mapping[HookEvent, Sequence[HookMatcher]], event: HookEvent, subject: str | None
) -> list[HookCommand]:
    """The hooks to run, de-duplicated by command, in configuration order."""
    seen: set[str] = set()
    out: list[HookCommand] = []
    for group in config.get(event, ()):
        if not matcher_matches(group.matcher, subject):
            continue
        for hook in group.hooks:
            if hook.command not in seen:
                seen.add(hook.command)
                out.append(hook)
    return out
