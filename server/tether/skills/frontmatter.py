"""The YAML frontmatter of skills and commands, for the subset these files use.

    ---
    name: pdf-tools
    description: >
      Fill and merge PDF forms.
    allowed-tools: Read, Bash(python scripts/*.py:*)
    paths:
      - "**/*.pdf"
    disable-model-invocation: false
    ---

Scalars (quoted or not, ``true``/``false``), inline lists ``[a, b]``, block lists of
``- item`` and block scalars (``|``, ``>``, with ``-``/``+``). Nested maps (e.g.
``hooks``) are skipped: nothing here reads them. A full YAML parser would be a dependency
for a dozen keys; anything this subset cannot read is simply absent.
"""

from __future__ import annotations

import re
from typing import Any

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")

Fields = dict[str, Any]


def split(text: str) -> tuple[Fields, str]:
    """(fields, body). A file without frontmatter is all body."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    return parse(match.group(1)), text[match.end() :]


def parse(block: str) -> Fields:
    fields: Fields = {}
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#") or line[:1].isspace():
            continue
        match = _KEY.match(line.rstrip())
        if match is None:
            continue
        key, raw = match.group(1), (match.group(2) or "").strip()
        nested: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or lines[i][:1].isspace() or _item(lines[i])
        ):
            nested.append(lines[i])
            i += 1
        if raw[:1] in ("|", ">"):
            fields[key] = _block_scalar(raw, nested)
        elif raw:
            fields[key] = _scalar(raw)
        else:
            lines_in = [ln.strip() for ln in nested if ln.strip()]
            # A block list; anything else under the key is a nested map, which is skipped.
            if lines_in and all(_item(ln) for ln in lines_in):
                fields[key] = [_scalar(ln[1:].strip()) for ln in lines_in]
    return fields


def _item(line: str) -> bool:
    return line == "-" or line.startswith("- ")


def _scalar(raw: str) -> Any:
    if raw.startswith("[") and raw.endswith("]"):
        return [_scalar(p.strip()) for p in _split_commas(raw[1:-1]) if p.strip()]
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    raw = re.sub(r"\s+#.*$", "", raw)
    lowered = raw.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    return raw


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


def _block_scalar(indicator: str, lines: list[str]) -> str:
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    cut = min(indents, default=0)
    body = [ln[cut:] if ln.strip() else "" for ln in lines]
    while body and not body[-1]:
        body.pop()
    if indicator.startswith("|"):
        text = "\n".join(body)
    else:
        text = re.sub(r"(?<!\n)\n(?!\n)", " ", "\n".join(body))
    return text if indicator.endswith("-") else text + "\n"


def as_list(value: Any) -> list[str]:
    """A list field written either way: ``[a, b]``, a block list, or ``a, b``."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, str):
        return [p.strip().strip("\"'") for p in _split_commas(value) if p.strip()]
    return []


def as_text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else str(value)
