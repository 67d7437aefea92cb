"""The YAML frontmatter of skills, commands and agent definitions, read by PyYAML.

    ---
    name: pdf-tools
    description: >
      Fill and merge PDF forms.
    allowed-tools: Read, Bash(python scripts/*.py:*)
    paths:
      - "**/*.pdf"
    disable-model-invocation: false
    ---

Front matter that is not valid YAML (a common slip: an unquoted ``: `` inside a
description) is read line by line as ``key: value`` strings instead, with a warning naming
the file and YAML's complaint, so a sloppy file still loads the way Claude Code's do.
"""

from __future__ import annotations

import logging
import re
from typing import Any, cast

import yaml

log = logging.getLogger(__name__)
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Fields = dict[str, Any]


def split(text: str, source: str = "") -> tuple[Fields, str]:
    """(fields, body). A file without frontmatter is all body."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    return parse(match.group(1), source), text[match.end() :]


def parse(block: str, source: str = "") -> Fields:
    try:
        data: Any = yaml.load(block, Loader=_Loader)
    except yaml.YAMLError as e:
        where = f" in {source}" if source else ""
        log.warning(
            "front matter%s is not valid YAML (%s); read as plain key: value lines",
            where,
            str(e).replace("\n", " "),
        )
        return _lines(block)
    if data is None:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in cast("dict[Any, Any]", data).items()}


def _lines(block: str) -> Fields:
    fields: Fields = {}
    for line in block.splitlines():
        match = _KEY.match(line.rstrip())
        if match is not None and match.group(2):
            fields[match.group(1)] = match.group(2).strip().strip("\"'")
    return fields


def _split_commas(text: str) -> list[str]:
    """Split on commas outside quotes and parentheses (``Bash(git diff:*)``)."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for index, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def as_list(value: Any) -> list[str]:
    """A list field written either way: ``[a, b]``, a block list, or ``a, b``."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, str):
        return [p.strip().strip("\"'") for p in _split_commas(value) if p.strip()]
    return []


def as_text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else str(value)
