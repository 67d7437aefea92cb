"""Words as bash reads them: quotes, backslashes, globs, braces and a leading tilde."""

from __future__ import annotations

import os
import re

from tree_sitter import Node

from tether.permissions.shell.model import Word

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
INTEGER = re.compile(r"[+-]?[0-9]+")
UNPARSED_EXPANSION = re.compile(r"`|\$[({\[]")
"""What bash expands in text the grammar left as plain content (a heredoc's)."""
BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")

WORD_TYPES = frozenset(
    {
        "word",
        "concatenation",
        "number",
        "raw_string",
        "string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "extglob_pattern",
        "regex",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
    }
)


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def has_glob(raw: str) -> bool:
    escaped = False
    for ch in raw:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "*?[":
            return True
    return False


def bare_word(raw: str, *, first: bool) -> Word:
    """An unquoted word: backslashes removed, globs noted, a leading ``~`` expanded."""
    out: list[str] = []
    escaped = glob = False
    for ch in raw:
        if escaped:
            if ch != "\n":  # backslash-newline joins lines
                out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            glob = glob or ch in "*?["
            out.append(ch)
    text = "".join(out)
    if BRACES.search(raw):
        return Word(text, None)
    value = text
    if first and raw.startswith("~"):
        prefix, sep, rest = raw.partition("/")
        if "\\" in prefix:
            return Word(text, None)
        home = os.path.expanduser(prefix)
        if home == prefix:
            return Word(text, None)  # an unknown user: bash leaves it, we do not guess
        value = home + sep + rest if sep else home
    return Word(text, value, glob=glob)


def unescape_double(raw: str) -> str:
    """Inside double quotes a backslash only escapes ``$ ` " \\`` and a newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
