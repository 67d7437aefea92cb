"""Slash commands: ``/name args`` typed by the user becomes a prompt before the engine runs.

Commands are Markdown files in ``.tether/commands/``, ``.claude/commands/`` and the
user's ``commands/`` folder (the file name is the command); user-invocable skills are
commands too, and win a clash (as in Claude Code 2.1). Frontmatter: ``description``,
``argument-hint``, ``allowed-tools`` (allowed without asking while the command runs) and
``model`` (the model for the command's turn). The body takes ``$ARGUMENTS``, ``$1``,
``$2``… (``$ARGUMENTS[0]``… too); without a placeholder the arguments are appended. The
rest of the expansion (``!`cmd```, ``@file``, MCP prompts) is in ``skills.expand``.

A prompt that names no known command passes through unchanged: a path like ``/usr/bin``
is not a command.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from tether.core.files import read_regular_text
from tether.protocol.content import ContentBlock, TextContent
from tether.skills.frontmatter import as_list, as_text, split
from tether.skills.registry import MAX_FILE_BYTES, Skill, SkillRegistry, substitute
from tether.skills.tool import load_text

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
_CALL = re.compile(r"\A\s*/(\S+)(.*)\Z", re.DOTALL)


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    hint: str | None
    body: str
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    """``model`` front matter: the command's turn runs on it (``inherit``: no change)."""
    path: Path | None = None
    skill: Skill | None = None
    """Set when the command is a skill: it expands to what the Skill tool would load."""

    @property
    def kind(self) -> Literal["command", "skill"]:
        return "command" if self.skill is None else "skill"

    def expand(self, args: str) -> str:
        if self.skill is not None:
            return load_text(self.skill, args)
        return substitute(self.body, args, zero_based=False).strip()


def command_dirs(root: Path) -> list[Path]:
    user = platformdirs.user_config_path("tether", appauthor=False) / "commands"
    return [root / ".tether" / "commands", root / ".claude" / "commands", user]


def parse_command(name: str, text: str, path: Path | None = None) -> Command:
    fields, body = split(text, str(path or name))
    first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    description = as_text(fields.get("description")) or first[:80] or f"Run /{name}"
    return Command(
        name=name,
        description=" ".join(description.split()),
        hint=as_text(fields.get("argument-hint")) or None,
        body=body,
        allowed_tools=tuple(as_list(fields.get("allowed-tools"))),
        model=_model(fields.get("model")),
        path=path,
    )


def _model(value: object) -> str | None:
    text = as_text(value)
    return None if text in ("", "inherit") else text


def discover(
    root: Path,
    *,
    dirs: Sequence[Path] | None = None,
    skills: SkillRegistry | None = None,
) -> list[Command]:
    """Every command, the first definition of a name winning (workspace over user), with
    the user-invocable skills first."""
    found: dict[str, Command] = {}
    registry = skills if skills is not None else SkillRegistry(root)
    for skill in registry.skills.values():
        if skill.user_invocable:
            found[skill.name] = Command(
                name=skill.name,
                description=skill.description,
                hint=skill.argument_hint,
                body=skill.body,
                allowed_tools=skill.allowed_tools,
                path=skill.path,
                skill=skill,
            )
    for folder in dirs if dirs is not None else command_dirs(root):
        try:
            files = sorted(folder.glob("*.md"))
        except OSError:
            continue
        for path in files:
            if path.stem in found or not _NAME.fullmatch(path.stem):
                continue
            try:
                found[path.stem] = parse_command(
                    path.stem, read_regular_text(path, max_bytes=MAX_FILE_BYTES), path
                )
            except (OSError, UnicodeDecodeError):
                continue
    return list(found.values())


def match(text: str, commands: Sequence[Command]) -> tuple[Command, str] | None:
    """The command ``text`` invokes and its arguments, or None."""
    call = _CALL.match(text)
    if call is None:
        return None
    command = next((c for c in commands if c.name == call.group(1)), None)
    return None if command is None else (command, call.group(2).strip())


def expand(text: str, root: Path, *, commands: Sequence[Command] | None = None) -> str | None:
    """The prompt ``/name args`` stands for, or None when ``text`` is not a known command."""
    found = match(text, commands if commands is not None else discover(root))
    return None if found is None else found[0].expand(found[1])


def expand_blocks(blocks: list[ContentBlock], commands: Sequence[Command]) -> list[ContentBlock]:
    """A front door's prompt: ``/name args`` in the first text block becomes the command's
    prompt; attachments after it stay."""
    if not blocks or not isinstance(blocks[0], TextContent):
        return blocks
    found = match(blocks[0].text, commands)
    if found is None:
        return blocks
    return [TextContent(text=found[0].expand(found[1])), *blocks[1:]]
