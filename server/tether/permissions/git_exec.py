"""Git configuration keys whose value git runs (or reads as more configuration).

One list for the two places that need it: the sandbox protects the files such keys name
(``tether.sandbox.doors``), and the permission pipeline asks before a shell line sets one
(``bash_gitconfig``), naming what it would run.
"""

from __future__ import annotations

import shlex

_ANY = "*"
EXECUTING: dict[str, dict[str, frozenset[str]]] = {
    "core": {
        "": frozenset(
            {"fsmonitor", "sshcommand", "pager", "editor", "askpass", "hookspath", "gitproxy"}
            | {"alternaterefscommand"}
        )
    },
    "sequence": {"": frozenset({"editor"})},
    "diff": {"": frozenset({"external"}), _ANY: frozenset({"textconv", "command"})},
    "difftool": {_ANY: frozenset({"cmd", "path"})},
    "mergetool": {_ANY: frozenset({"cmd", "path"})},
    "merge": {_ANY: frozenset({"driver"})},
    "filter": {_ANY: frozenset({"clean", "smudge", "process"})},
    "credential": {"": frozenset({"helper"}), _ANY: frozenset({"helper"})},
    "gpg": {"": frozenset({"program"}), _ANY: frozenset({"program", "defaultkeycommand"})},
    "alias": {"": frozenset({_ANY})},
    "pager": {"": frozenset({_ANY})},
    "interactive": {"": frozenset({"difffilter"})},
    "web": {"": frozenset({"browser"})},
    "browser": {_ANY: frozenset({"cmd", "path"})},
    "man": {_ANY: frozenset({"cmd", "path"})},
    "remote": {_ANY: frozenset({"uploadpack", "receivepack", "proxy"})},
    "uploadpack": {"": frozenset({"packobjectshook"})},
    "hook": {_ANY: frozenset({"command"})},
    "include": {"": frozenset({"path"})},
    "includeif": {_ANY: frozenset({"path"})},
    "protocol": {"": frozenset({"allow"}), _ANY: frozenset({"allow"})},
    "submodule": {_ANY: frozenset({"update"})},
    "sendemail": {
        "": frozenset({"smtpserver", "tocmd", "cccmd", "sendmailcmd"}),
        _ANY: frozenset({"smtpserver", "tocmd", "cccmd", "sendmailcmd"}),
    },
}
"""section -> subsection ("" none, ``*`` any) -> variables (``*`` any), lower case."""
BUILTIN_FSMONITOR = frozenset({"", "true", "false", "yes", "no", "on", "off", "0", "1"})
"""Values of ``core.fsmonitor`` that choose git's own daemon (or none), not a hook."""
BANG_ONLY = frozenset({"alias", "submodule"})
"""Sections whose values run only when they start with ``!`` (else a git command or mode)."""


def split_key(key: str) -> tuple[str, str, str] | None:
    """``section``, ``subsection`` and ``variable`` of a dotted key (case of the section
    and variable folded, as git does)."""
    section, dot, rest = key.partition(".")
    if not dot or not rest:
        return None
    sub, _, variable = rest.rpartition(".")
    return section.lower(), sub, variable.lower()


def executes(key: str, value: str | None = None) -> bool:
    """Does setting ``key`` (to ``value``, when known) make git run something, or read
    more configuration?"""
    parts = split_key(key)
    if parts is None:
        return False
    section, sub, variable = parts
    table = EXECUTING.get(section)
    if table is None:
        return False
    names = table.get("" if not sub else _ANY)
    if names is None or (variable not in names and _ANY not in names):
        return False
    if section in BANG_ONLY and value is not None:
        return value.lstrip().startswith("!")
    if section == "core" and variable == "fsmonitor" and value is not None:
        return value.strip().lower() not in (
            "",
            "true",
            "false",
            "yes",
            "no",
            "on",
            "off",
            "0",
            "1",
        )
    if section == "protocol" and value is not None:
        return value.strip().lower() == "always"
    return True


def program_words(value: str) -> list[str]:
    """The words of a value git runs with the shell (``!`` of an alias removed)."""
    text = value.lstrip().removeprefix("!")
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()
