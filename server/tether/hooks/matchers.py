"""Which configured hooks run for an event, with Claude Code's matcher semantics.

A matcher that is missing, ``""`` or ``*`` matches everything; plain names joined by ``|``
are an exact list (``Edit|Write``); anything else is an unanchored regular expression
(``mcp__.*``, ``Notebook.*``). Events without a subject (UserPromptSubmit, Stop...) ignore
matchers. The same command configured twice runs once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from tether.settings.model import HookCommand, HookEvent, HookMatcher

log = logging.getLogger(__name__)

_PLAIN_LIST = re.compile(r"^[A-Za-z0-9_|]+$")


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
    if subject is None or matcher is None or matcher.strip() in ("", "*"):
        return True
    matcher = matcher.strip()
    if _PLAIN_LIST.match(matcher):
        return subject in matcher.split("|")
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
