"""Context the engine adds at turn boundaries on its own: memory entries relevant to the
prompt (each once, until the conversation is replaced) and notices of files changed by
someone else since the agent read them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tether.context.memory import MAX_RECALLED, Bm25Recaller, Recaller, memory_attachment
from tether.context.recall import memory_entries
from tether.context.watcher import ChangeWatcher, change_notice
from tether.core.messages import Message, TextBlock
from tether.tools.context import FileState


class BoundaryContext:
    def __init__(self, cwd: Path, recaller: Recaller | None = None) -> None:
        self.cwd = cwd
        self.recaller = recaller or Bm25Recaller()
        self.watcher = ChangeWatcher()
        self._recalled: set[Path] = set()

    def memory(self, query: str) -> Message | None:
        """Memory entries relevant to ``query`` that were not attached yet."""
        entries = [e for e in memory_entries(self.cwd) if e.path not in self._recalled]
        chosen = self.recaller.recall(query, entries, MAX_RECALLED)
        text = memory_attachment(chosen)
        if not text:
            return None
        self._recalled.update(e.path for e in chosen)
        return Message(role="user", content=[TextBlock(text=text)])

    def reset(self) -> None:
        """The conversation was replaced: what it recalled may be recalled again."""
        self._recalled.clear()

    async def changed_files(self, files: FileState) -> list[Message]:
        self.watcher.follow(files.paths())
        changed = await asyncio.to_thread(self.watcher.changed_since_read, files)
        return [change_notice(changed)] if changed else []

    def close(self) -> None:
        self.watcher.close()
