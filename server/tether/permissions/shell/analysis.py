"""The entry points: a parsed line (cached), and the read-only verdict for a whole line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from tether.permissions.shell.effects import Effects, effects
from tether.permissions.shell.model import Script, SimpleCommand, Word
from tether.permissions.shell.syntax import Unanalysable
from tether.permissions.shell.syntax import parse_script as _parse


@lru_cache(maxsize=1024)  # one call is looked at several times (flags, rules, sandbox, display)
def parse_script(command: str) -> Script | None:
    """The parsed line; None when it cannot be analysed (callers treat that as unsafe)."""
    if "\x00" in command:
        return None
    try:
        return _parse(command)
    except Unanalysable:
        return None


def parse_command(command: str) -> list[SimpleCommand] | None:
    """Every simple command in ``command``; None when it cannot be analysed."""
    script = parse_script(command)
    return None if script is None else list(script.commands)


def is_read_only_simple(cmd: SimpleCommand) -> bool:
    return effects(cmd).read_only


def command_effects(
    cmd: SimpleCommand, script: Script, env: Mapping[str, str] | None = None
) -> Effects:
    """``effects``, where a call of a function the line defines does only what its body
    (listed with the line's commands) and its redirections do. ``env``: the variables of
    the shell that runs it, the session's caller's (None: this process's)."""
    if cmd.words and cmd.words[0].value in script.functions and cmd.words[0].static:
        return effects(replace(cmd, words=(Word.literal(":"),)), env)
    return effects(cmd, env)


@lru_cache(maxsize=512)
def is_read_only_command(command: str) -> bool:
    """True only when every command inside ``command`` is known not to change anything
    and not to run anything it does not show. Where its paths point is not considered."""
    script = parse_script(command)
    if script is None or script.hazard is not None or not script.commands:
        return False
    return all(command_effects(c, script).read_only for c in script.commands)
