"""The first two rungs of the compaction ladder: tool results cut to a budget, and old
tool results cleared.

(a) ``ResultBudget``: a result longer than the cap goes to a file (readable by the read
    tools, in parts) and a preview with the path stays. The cap follows the window at the
    time the result is checked (``result_cap``): a tenth of the window, at most the
    setting's. A smaller window learned later cuts the results already there to the new cap.
(b) ``clear_old_results``: results of re-runnable tools, oldest first, become a short
    note: all but the newest few, and more while the context is still over its target. A
    result the model has not seen yet (after the last assistant message) is never cleared.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from tether.context.tokens import CHARS_PER_TOKEN, estimate_text
from tether.core.messages import Block, Message, ResultPart, TextBlock, ToolResultBlock

CLEARED = "[An older tool result was cleared to save context. Run the tool again if you need it.]"
MICROCOMPACTABLE = frozenset(
    {"Read", "Bash", "Grep", "Glob", "Edit", "Write", "TaskOutput", "WebFetch", "WebSearch"}
)
RESULT_SHARE = 0.1
"""A single tool result takes at most this share of the window."""
MIN_RESULT_CHARS = 2_000
NOTE_CHARS = 300
"""Room for the note that says where the full text is."""


def result_cap(window: int, max_chars: int) -> int:
    """Characters a tool result may keep in a ``window``-token context."""
    share = int(window * RESULT_SHARE * CHARS_PER_TOKEN)
    return min(max_chars, max(MIN_RESULT_CHARS, share))


class ResultBudget:
    """Stores oversized results of the messages not checked yet (results do not grow once
    in the history; a replaced history, or a smaller cap, is checked again from the start).

    Each stored result gets a file of its own, named by a digest of its tool call id and
    its text: never by the id itself (a server chooses ids, and an id like ``../x`` or
    ``/etc/x`` must not become a path), and never shared by two different results (servers
    that number ids per response repeat them). Images and documents of a cut result stay in
    it: only its text is cut."""

    def __init__(self, results_dir: Path, preview_chars: int) -> None:
        self.results_dir = results_dir
        self.preview_chars = preview_chars
        self._checked: tuple[int, Message | None, int] = (0, None, 0)
        """How many messages were checked, the last of them, and the cap they were checked at."""
        self._notes: dict[str, tuple[Path, int]] = {}
        """The text each cut left (a preview and its note) -> the file with the full text
        and its length: a note cut again for a smaller window points to the same file."""

    async def apply(self, messages: list[Message], cap: int) -> int:
        """Cut the results over ``cap`` characters in ``messages`` (in place); how many."""
        stored = 0
        start, last, checked_cap = self._checked
        if start > len(messages) or (start and messages[start - 1] is not last):
            start = 0
        if cap < checked_cap:
            start = 0
        preview = max(min(self.preview_chars, cap - NOTE_CHARS), 200)
        for i in range(start, len(messages)):
            message = messages[i]
            if message.role != "user" or not any(
                isinstance(b, ToolResultBlock) and len(b.text) > cap for b in message.content
            ):
                continue
            content: list[Block] = []
            for block in message.content:
                if isinstance(block, ToolResultBlock) and len(block.text) > cap:
                    block = await self._cut(block, preview)
                    stored += 1
                content.append(block)
            messages[i] = Message(role="user", content=content)
        self._checked = (len(messages), messages[-1] if messages else None, cap)
        return stored

    async def _cut(self, block: ToolResultBlock, preview: int) -> ToolResultBlock:
        text = block.text
        known = self._notes.get(text)
        if known is None:
            path = await asyncio.to_thread(self._store, block.tool_use_id, text)
            known = (path, len(text))
        path, length = known
        note = (
            f"{text[:preview]}\n\n[... this result had {length} characters; the full text "
            f"is in {path}. Read it with offset/limit if you need more.]"
        )
        self._notes[note] = known
        # The text parts become the one note, where the first of them was; images and
        # documents keep their places.
        parts: list[ResultPart] = []
        for part in block.content:
            if not isinstance(part, TextBlock):
                parts.append(part)
            elif not any(isinstance(p, TextBlock) for p in parts):
                parts.append(TextBlock(text=note))
        return block.model_copy(update={"content": parts})

    def _store(self, tool_use_id: str, text: str) -> Path:
        """Write ``text`` to a new file of its own in the results directory (0600, never
        through a symlink); the same id and text again reuse the file already written."""
        self.results_dir.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8", "surrogateescape" if _escaped(text) else "backslashreplace")
        digest = hashlib.sha256(
            tool_use_id.encode("utf-8", "surrogatepass") + b"\0" + data
        ).hexdigest()[:32]
        for n in range(100):
            path = self.results_dir / (f"{digest}.txt" if n == 0 else f"{digest}-{n}.txt")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            try:
                fd = os.open(path, flags, 0o600)
            except FileExistsError:
                if not path.is_symlink() and path.is_file() and path.read_bytes() == data:
                    return path
                continue
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return path
        raise OSError(f"no free file name for a tool result in {self.results_dir}")


def _escaped(text: str) -> bool:
    """Every lone surrogate in ``text`` stands for an undecodable byte (a file name's, as
    ``os.fsdecode`` gives it): written back as that byte."""
    return all(0xDC80 <= ord(c) <= 0xDCFF for c in text if 0xD800 <= ord(c) <= 0xDFFF)


def clear_old_results(
    messages: list[Message], names: Mapping[str, str], keep: int, excess: float, ratio: float
) -> int:
    """Clear the results of re-runnable tools (``names``: tool_use id -> tool) in place:
    all but the newest ``keep``, then more, oldest first, until about ``excess`` tokens
    (estimates times ``ratio``) are gone. Returns how many were cleared."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    eligible = [
        (i, block)
        for i, m in enumerate(messages[: max(last, 0)])
        if m.role == "user"
        for block in m.content
        if isinstance(block, ToolResultBlock)
        and names.get(block.tool_use_id) in MICROCOMPACTABLE
        and block.text != CLEARED
    ]
    saved = estimate_text(CLEARED)
    targets: dict[int, set[str]] = {}
    for n, (i, block) in enumerate(eligible):
        if n >= len(eligible) - keep and excess <= 0:
            break
        targets.setdefault(i, set()).add(block.tool_use_id)
        excess -= max(estimate_text(block.text) - saved, 0) * ratio
    for i, ids in targets.items():
        content = [
            b.model_copy(update={"content": [TextBlock(text=CLEARED)]})
            if isinstance(b, ToolResultBlock) and b.tool_use_id in ids
            else b
            for b in messages[i].content
        ]
        messages[i] = Message(role="user", content=content)
    return sum(len(ids) for ids in targets.values())
