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
from collections.abc import Mapping
from pathlib import Path

from tether.context.tokens import CHARS_PER_TOKEN, estimate_text
from tether.core.messages import Block, Message, TextBlock, ToolResultBlock

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
    in the history; a replaced history, or a smaller cap, is checked again from the start)."""

    def __init__(self, results_dir: Path, preview_chars: int) -> None:
        self.results_dir = results_dir
        self.preview_chars = preview_chars
        self._checked: tuple[int, Message | None, int] = (0, None, 0)
        """How many messages were checked, the last of them, and the cap they were checked at."""

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
        path = self.results_dir / f"{block.tool_use_id}.txt"
        text = block.text
        stored = await asyncio.to_thread(self._stored_text, path, text)
        note = (
            f"{text[:preview]}\n\n[... this result had {len(stored)} characters; the full text "
            f"is in {path}. Read it with offset/limit if you need more.]"
        )
        return block.model_copy(update={"content": [TextBlock(text=note)]})

    def _stored_text(self, path: Path, text: str) -> str:
        """The full text on disk: written once (a result cut again for a smaller window
        keeps the file its first cut wrote)."""
        self.results_dir.mkdir(parents=True, exist_ok=True)
        if path.exists():
            return path.read_text(encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
        return text


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
