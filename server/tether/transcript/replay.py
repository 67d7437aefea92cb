"""A conversation rebuilt from its transcript as the updates a client would have seen
(``tether/loadSession`` history, ACP ``session/load``). Attachments stay hidden."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tether.core.messages import (
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
)
from tether.protocol.content import TextContent, TextToolContent, ToolContent
from tether.protocol.server_tools import server_tool_update
from tether.protocol.stop_reasons import stop_reason
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Location,
    Plan,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    TurnEnd,
    TurnError,
    Usage,
    UsageUpdate,
    UserMessage,
)
from tether.transcript.payloads import PlanData, TurnEndData
from tether.transcript.records import (
    AssistantRecord,
    ChainRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
)

_TOOL_CONTENT: TypeAdapter[ToolContent] = TypeAdapter(ToolContent)
Describe = Callable[[ToolUseBlock], tuple[str, ToolKind, list[Location]]]


def history_updates(
    chain: list[ChainRecord], describe: Describe, context_window: int = 0
) -> list[tuple[str, SessionUpdate]]:
    """(turnId, update) pairs in conversation order, with each turn's usage before its end."""
    out: list[tuple[str, SessionUpdate]] = []
    usage = Usage()
    context = 0
    for record in chain:
        turn = record.turn_id or ""
        if isinstance(record, AssistantRecord) and record.usage is not None:
            usage = usage.plus(record.usage)
            u = record.usage
            context = (
                u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens + u.output_tokens
            )
        if isinstance(record, UserRecord):
            content: list[Any] = list(record.content) or [TextContent(text=record.message.text)]
            out.append((turn, UserMessage(content=content)))
        elif isinstance(record, AssistantRecord):
            for block in record.message.content:
                if isinstance(block, TextBlock):
                    out.append((turn, AgentMessageChunk(text=block.text)))
                elif isinstance(block, ThinkingBlock):
                    out.append((turn, AgentThoughtChunk(text=block.thinking)))
                elif isinstance(block, ServerToolUseBlock | WebSearchToolResultBlock):
                    out.append((turn, server_tool_update(block)))
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
            shown = record.display or {}
            refused = record.rejected or {}
            for result in record.message.tool_results:
                rejected = refused.get(result.tool_use_id)
                content = _content(shown.get(result.tool_use_id))
                if not content and rejected is None:
                    content = [TextToolContent(text=result.text[:2000])]
                out.append(
                    (
                        turn,
                        ToolCallUpdate(
                            tool_call_id=result.tool_use_id,
                            status="failed" if result.is_error else "completed",
                            content=content or None,
                            rejected=rejected,
                        ),
                    )
                )
        elif isinstance(record, SystemRecord) and isinstance(record.data, PlanData):
            out.append((turn, Plan(entries=list(record.data.entries))))
        elif isinstance(record, SystemRecord) and isinstance(record.data, TurnEndData):
            if usage != Usage():
                update = UsageUpdate(
                    **usage.model_dump(), context_tokens=context, context_window=context_window
                )
                out.append((turn, update))
                usage = Usage()
            out.append((turn, _turn_end(record.data)))
    return out


def _turn_end(data: TurnEndData) -> TurnEnd:
    """The ``turn_end`` the turn ended with live, its ``error`` included."""
    stop = stop_reason(data.reason)
    if stop != "error":
        return TurnEnd(stop_reason=stop)
    message = data.message or data.reason.replace("_", " ")
    return TurnEnd(stop_reason=stop, error=TurnError(code=data.reason, message=message))


def _content(raw: list[dict[str, Any]] | None) -> list[ToolContent]:
    if not raw:
        return []
    try:
        return [_TOOL_CONTENT.validate_python(item) for item in raw]
    except ValidationError:
        return []
