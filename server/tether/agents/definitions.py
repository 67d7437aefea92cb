"""Agent definitions: built-ins plus Markdown files with frontmatter from
``~/.config/tether/agents``, ``.claude/agents`` and ``.tether/agents`` (later ones win).

    ---
    name: reviewer
    description: Reviews a change for bugs
    tools: Read, Grep, Glob
    model: inherit
    ---
    The system prompt of the agent.

Invalid files are skipped with a warning.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from tether import prompts
from tether.core.files import read_regular_text
from tether.skills.frontmatter import as_list, as_text, split

log = logging.getLogger(__name__)
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    """None: every tool of the parent."""
    model: str | None = None
    read_only: bool = False
    """Runs in plan mode: anything that is not read-only is refused, in code."""


BUILTINS = (
    AgentDefinition(
        name="general-purpose",
        description="General agent for multi-step tasks: research, code changes, running checks.",
        prompt=prompts.load("agents/general-purpose.md"),
    ),
    AgentDefinition(
        name="explore",
        description="Fast read-only agent for finding code and answering questions about it.",
        prompt=prompts.load("agents/explore.md"),
        tools=("Read", "Glob", "Grep", "Bash"),
        read_only=True,
    ),
)


def parse_frontmatter(text: str, source: str = "") -> tuple[dict[str, str], str]:
    """Fields as text (a YAML list of tools becomes ``a, b``) and the body."""
    raw, body = split(text, source)
    fields = {
        k: ", ".join(as_list(v)) if isinstance(v, list) else as_text(v) for k, v in raw.items()
    }
    return fields, body.lstrip("\n")


def parse_definition(path: Path) -> AgentDefinition | None:
    try:
        fields, body = parse_frontmatter(read_regular_text(path), str(path))
    except (OSError, UnicodeDecodeError) as e:
        log.warning("agent definition %s unreadable: %s", path, e)
        return None
    name = fields.get("name", "")
    if not _NAME.match(name) or not fields.get("description") or not body.strip():
        log.warning("agent definition %s skipped: needs a name, a description and a body", path)
        return None
    raw_tools = fields.get("tools", "").strip("[]")
    tools = tuple(t.strip() for t in raw_tools.split(",") if t.strip()) or None
    model = fields.get("model") or None
    return AgentDefinition(
        name=name,
        description=fields["description"],
        prompt=body,
        tools=tools,
        model=None if model == "inherit" else model,
        read_only=fields.get("readOnly", fields.get("read-only", "")).lower() == "true",
    )


def definition_dirs(root: Path) -> list[Path]:
    user = platformdirs.user_config_path("tether", appauthor=False) / "agents"
    return [user, root / ".claude" / "agents", root / ".tether" / "agents"]


def load_definitions(root: Path) -> dict[str, AgentDefinition]:
    found = {d.name: d for d in BUILTINS}
    for directory in definition_dirs(root):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.md")):
            definition = parse_definition(path)
            if definition is not None:
                found[definition.name] = definition
    return found
