"""What the compaction ladder works on (the engine's view of its conversation), and what a
summary leaves in the transcript: the boundary and the kept messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from tether.core.hooks import Hooks
from tether.core.messages import Message, RedactedThinkingBlock, ThinkingBlock
from tether.protocol.updates import SessionUpdate
from tether.providers.base import Provider, SystemBlock, TokenUsage, ToolSpec
from tether.transcript.payloads import AttachmentKind, CompactBoundaryData
from tether.transcript.records import AttachmentRecord, Record, SystemRecord

Trigger = Literal["auto", "manual", "reactive"]
Emit = Callable[[SessionUpdate], None]


class Conversation(Protocol):
    """What the ladder works on: the engine's view of its conversation."""

    @property
    def session_id(self) -> str: ...

    @property
    def messages(self) -> list[Message]:
        """The history; the ladder rewrites oversized and old results in place."""
        ...

    @property
    def provider(self) -> Provider: ...

    @property
    def hooks(self) -> Hooks: ...

    def request_prefix(self) -> tuple[list[SystemBlock], list[ToolSpec]]:
        """The system prompt and tools the next request sends with the history."""
        ...

    def discovered_tools(self) -> list[str]: ...

    def record(self, record: Record) -> None: ...

    def replace_history(self, messages: list[Message]) -> None:
        """The history becomes ``messages`` (the summary, what is kept after it)."""
        ...

    def count_usage(self, usage: TokenUsage) -> None:
        """A summary request's tokens count like any other request's."""
        ...

    def note(self, text: str) -> None: ...


def split_tail(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """Mid tool loop with thinking, the last assistant message and its results stay verbatim
    after the summary, its thinking blocks and signatures too: the loop goes on from there
    with the model's reasoning intact (the caller drops a tail too big to keep)."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    if last <= 0 or not messages[last].tool_uses or last + 1 >= len(messages):
        return messages, []
    if not isinstance(messages[last].content[0], ThinkingBlock | RedactedThinkingBlock):
        return messages, []
    answered = {r.tool_use_id for m in messages[last + 1 :] for r in m.tool_results}
    if all(u.id in answered for u in messages[last].tool_uses):
        return messages[:last], messages[last:]
    return messages, []


def boundary_records(
    engine: Conversation,
    turn_id: str | None,
    trigger: Trigger,
    before: int,
    after: int,
    kept: list[Message],
) -> list[Record]:
    records: list[Record] = [
        SystemRecord(
            session_id=engine.session_id,
            turn_id=turn_id,
            data=CompactBoundaryData(
                trigger=trigger,
                tokens_before=before,
                tokens_after=after,
                discovered_tools=sorted(engine.discovered_tools()),
            ),
        )
    ]
    tail: list[AttachmentKind] = [
        "compact_tail" if m.role == "assistant" or m.tool_results else "compact_reattach"
        for m in kept[1:]
    ]
    kinds: list[AttachmentKind] = ["compact_summary", *tail]
    records += [
        AttachmentRecord(session_id=engine.session_id, turn_id=turn_id, message=m, attachment=k)
        for m, k in zip(kept, kinds, strict=True)
    ]
    return records
