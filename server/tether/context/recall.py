"""Where memory indexes live: the workspace's ``.tether/memory/MEMORY.md`` and the user's
``memory/MEMORY.md`` in Tether's config directory."""

from __future__ import annotations

import logging
from pathlib import Path

import platformdirs

from tether.context.memory import MemoryEntry, load_index

log = logging.getLogger(__name__)


def index_paths(root: Path) -> list[Path]:
    user = platformdirs.user_config_path("tether", appauthor=False) / "memory" / "MEMORY.md"
    return [root / ".tether" / "memory" / "MEMORY.md", user]


def memory_entries(root: Path) -> list[MemoryEntry]:
    entries: list[MemoryEntry] = []
    for path in index_paths(root):
        index = load_index(path)
        for warning in index.warnings:
            log.warning("%s", warning)
        entries += index.entries
    return entries
