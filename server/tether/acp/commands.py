"""Slash commands on the ACP front door: the list for ``available_commands_update`` and the
expansion of a prompt that starts with ``/name``. Both come from the engine-level registry
(``tether.skills.commands``: command files and user-invocable skills); this module only
maps them to ACP's shapes. The update is sent even when the list is empty, because Zed
refuses ``/`` input from agents that never sent one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import acp.schema as wire

from tether.protocol.content import ContentBlock
from tether.skills import commands as registry
from tether.skills.commands import Command, command_dirs

__all__ = ["Command", "available", "command_dirs", "discover", "expand", "parse"]


def discover(root: Path) -> list[Command]:
    return registry.discover(root)


def parse(name: str, text: str) -> Command:
    return registry.parse_command(name, text)


def available(commands: Sequence[Command]) -> wire.AvailableCommandsUpdate:
    return wire.AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            wire.AvailableCommand(
                name=c.name,
                description=c.description,
                input=wire.AvailableCommandInput(root=wire.UnstructuredCommandInput(hint=c.hint))
                if c.hint
                else None,
            )
            for c in commands
        ],
    )


def expand(blocks: list[ContentBlock], commands: Sequence[Command]) -> list[ContentBlock]:
    """``/name args`` in the first text block becomes the command's prompt."""
    return registry.expand_blocks(blocks, commands)
