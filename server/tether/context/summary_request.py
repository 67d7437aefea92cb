"""Summary requests that fit the window they are sent to.

The conversation goes to the model as a plain-text transcript in one user message (no tool
blocks, so no tool definitions are needed and nothing can be left unpaired), under the short
summarizer system prompt. To fit ``budget`` tokens:

1. the whole transcript, if it fits;
2. else older tool results stripped (the newest ``KEEP_RESULTS`` stay whole);
3. else the stripped transcript in parts, each summarised together with the summary of the
   parts before it (a part that alone is too long is cut in the middle).

Estimates use ``estimate_text`` (CJK-aware) with a safety margin; if the API still refuses,
the caller retries once with half the budget.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tether import prompts
from tether.context.tokens import estimate_text
from tether.core.messages import (
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

KEEP_RESULTS = 3
STRIPPED = "[tool result omitted]"
MARGIN = 0.85
"""Use this share of the budget: estimates are not the API's count."""


@dataclass(frozen=True)
class SummaryPart:
    """One summary request: the transcript (or a part of it) and the summary so far."""

    transcript: str
    previous: str = ""
    part: int = 1
    parts: int = 1

    def prompt(self, instructions: str) -> str:
        head = ""
        if self.previous:
            head = f"<previous-summary>\n{self.previous}\n</previous-summary>\n\n"
        label = f" part {self.part} of {self.parts}" if self.parts > 1 else ""
        ask = prompts.render("compaction/instructions.md", instructions=instructions)
        return f"{head}<conversation{label}>\n{self.transcript}\n</conversation>\n\n{ask}"


def render_message(message: Message, *, keep_results: bool) -> str:
    lines: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            lines.append(f"{message.role}: {block.text}")
        elif isinstance(block, ToolUseBlock):
            lines.append(f"assistant called {block.name} {json.dumps(block.input)}")
        elif isinstance(block, ToolResultBlock):
            body = block.text if keep_results else STRIPPED
            lines.append(f"tool result{' (error)' if block.is_error else ''}: {body}")
        elif isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            continue  # reasoning, not record: the summary needs what was said and done
        else:
            lines.append(f"{message.role}: [image]")
    return "\n".join(lines)


def transcript_lines(messages: Sequence[Message], *, strip: bool) -> list[str]:
    with_results = [i for i, m in enumerate(messages) if m.tool_results]
    keep = set(with_results[-KEEP_RESULTS:]) if strip else set(range(len(messages)))
    return [render_message(m, keep_results=i in keep) for i, m in enumerate(messages)]


def plan_summary(
    messages: Sequence[Message], budget: int, instructions: str = ""
) -> list[SummaryPart]:
    """The requests that summarise ``messages`` within ``budget`` input tokens each."""
    room = int(budget * MARGIN) - estimate_text(
        prompts.render("compaction/instructions.md", instructions=instructions)
    )
    room = max(room, 200)
    for strip in (False, True):
        lines = transcript_lines(messages, strip=strip)
        text = "\n\n".join(lines)
        if estimate_text(text) <= room:
            return [SummaryPart(text)]
    # In parts; each request also carries the summary so far (at most a quarter of the room).
    part_room = max(room - room // 4, 100)
    chunks: list[list[str]] = [[]]
    used = 0
    for line in lines:
        line = _fit(line, part_room)
        cost = estimate_text(line) + 1
        if chunks[-1] and used + cost > part_room:
            chunks.append([])
            used = 0
        chunks[-1].append(line)
        used += cost
    n = len(chunks)
    return [SummaryPart("\n\n".join(c), part=i + 1, parts=n) for i, c in enumerate(chunks)]


def _fit(line: str, room: int) -> str:
    if estimate_text(line) <= room:
        return line
    # Keep the start and the end: the gist and the outcome.
    keep = max(int(len(line) * room / max(estimate_text(line), 1)) // 2 - 40, 20)
    return f"{line[:keep]}\n[... {len(line) - 2 * keep} characters cut ...]\n{line[-keep:]}"
