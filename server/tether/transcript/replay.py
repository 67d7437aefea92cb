"""A conversation rebuilt from its transcript as the updates a client would have seen
(``tether/loadSession`` history, ACP ``session/load``). Attachments stay hidden."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.engine.messages import TextBlock, ThinkingBlock, ToolUseBlock
from tether.protocol.content import TextContent, TextToolContent
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Location,
    Plan,
    PlanEntry,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    TurnEnd,
    UserMessage,
)
from tether.transcript.records import (
    AssistantRecord,
    ChainRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
)

Describe = Callable[[ToolUseBlock], tuple[str, ToolKind, list[Location]]]
_STOP = {
    "completed": "end_turn",
    "max_turns": "max_turn_requests",
    "aborted": "cancelled",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


def history_updates(
    chain: list[ChainRecord], describe: Describe
) -> list[tuple[str, SessionUpdate]]:
    """(turnId, update) pairs in conversation order."""
    out: list[tuple[str, SessionUpdate]] = []
    for record in chain:
        turn = record.turn_id or ""
        if isinstance(record, UserRecord):
            content: list[Any] = list(record.content) or [TextContent(text=record.message.text)]
            out.append((turn, UserMessage(content=content)))
        elif isinstance(record, AssistantRecord):
            for block in record.message.content:
                if isinstance(block, TextBlock):
                    out.append((turn, AgentMessageChunk(text=block.text)))
                elif isinstance(block, ThinkingBlock):
                    out.append((turn, AgentThoughtChunk(text=block.thinking)))
                elif isinstance(block, ToolUseBlock):
                    title, kind, locations = describe(block)
                    out.append(
                        (
                            turn,
                            ToolCall(
                                tool_call_id=block.id,
                                title=title,
                                tool_kind=kind,
                                status="pending",
                                raw_input=block.input,
                                locations=locations or None,
                            ),
                        )
                    )
        elif isinstance(record, ToolResultRecord):
            for result in record.message.tool_results:
                out.append(
                    (
                        turn,
                        ToolCallUpdate(
                            tool_call_id=result.tool_use_id,
                            status="failed" if result.is_error else "completed",
                            content=[TextToolContent(text=result.text[:2000])],
                        ),
                    )
                )
        elif isinstance(record, SystemRecord) and record.subtype == "plan":
            entries = [PlanEntry.model_validate(e) for e in record.data.get("entries", [])]
            out.append((turn, Plan(entries=entries)))
        elif isinstance(record, SystemRecord) and record.subtype == "turn_end":
            reason = str(record.data.get("reason", "completed"))
            out.append((turn, TurnEnd(stop_reason=_STOP.get(reason, "error"))))  # type: ignore[arg-type]
    return out
