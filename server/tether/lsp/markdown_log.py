"""The conversation of a session as a Markdown file a plain client can open: every request,
the agent's replies, the steps it took and how each turn ended.

One file per session, ``<data dir>/conversations/<session id>.md`` (0600: it holds code),
appended as the session's updates arrive and flushed when a turn ends, so opening it with
``window/showDocument`` then shows the whole turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
from pathlib import Path

from tether.protocol.updates import (
    AgentMessageChunk,
    Notice,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
)
from tether.transcript.store import data_dir

ENDINGS = {
    "end_turn": "done",
    "cancelled": "stopped",
    "error": "failed",
    "max_tokens": "stopped at the output limit",
    "max_turn_requests": "stopped after too many steps",
    "refusal": "the model declined",
}


def conversation_path(session_id: str, root: Path | None = None) -> Path:
    return (root or data_dir()) / "conversations" / f"{session_id}.md"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines())


class MarkdownLog:
    """Renders one session's updates into its Markdown file."""

    def __init__(self, path: Path, title: str) -> None:
        self.path = path
        self._title = title
        self._pending: list[str] = []
        self._in_reply = False
        self._calls: dict[str, str] = {}
        self._lock = asyncio.Lock()
        self._flushes: set[asyncio.Task[None]] = set()

    def ask(self, task: str, request: str) -> None:
        """A request starts a turn."""
        when = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
        self._in_reply = False
        self._pending.append(f"\n## {task} — {when}\n\n{_quote(request)}\n")

    def update(self, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk):
            if not self._in_reply:
                self._pending.append("\n")
                self._in_reply = True
            self._pending.append(update.text)
            return
        if isinstance(update, ToolCall):
            self._calls[update.tool_call_id] = update.title
        elif isinstance(update, ToolCallUpdate) and update.status in ("completed", "failed"):
            title = self._calls.pop(update.tool_call_id, update.title or "a tool call")
            if update.status == "failed":
                why = f" (rejected by the {update.rejected})" if update.rejected else " (failed)"
                self._line(f"- ✗ `{title}`{why}")
            else:
                self._line(f"- ✓ `{title}`")
        elif isinstance(update, Notice) and update.level != "info":
            self._line(f"> **{update.level}:** {update.message}")
        elif isinstance(update, TurnEnd):
            detail = f": {update.error.message}" if update.error is not None else ""
            self._line(f"\n*Turn {ENDINGS.get(update.stop_reason, update.stop_reason)}{detail}.*")
            self._schedule_flush()

    def _line(self, text: str) -> None:
        if self._in_reply:
            self._pending.append("\n")
            self._in_reply = False
        self._pending.append(f"\n{text}\n")

    def _schedule_flush(self) -> None:
        task = asyncio.get_running_loop().create_task(self.flush())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def flush(self) -> None:
        """Append what has not been written yet."""
        async with self._lock:
            if not self._pending:
                return
            text, self._pending = "".join(self._pending), []
            await asyncio.to_thread(self._append, text)

    def _append(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        new = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            if new:
                out.write(f"# Tether — {self._title}\n")
            out.write(text)

    async def close(self) -> None:
        for task in list(self._flushes):
            with contextlib.suppress(Exception):
                await task
        await self.flush()
