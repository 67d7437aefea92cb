"""Provider-side tool blocks (web search) as the editor sees them: a tool call when the
search starts, a tool call update with the results when they arrive. Used live by the turn
loop and when a transcript is replayed."""

from __future__ import annotations

from tether.core.messages import ServerToolUseBlock, WebSearchError, WebSearchToolResultBlock
from tether.protocol.content import TextToolContent
from tether.protocol.updates import SessionUpdate, ToolCall, ToolCallUpdate


def server_tool_update(block: ServerToolUseBlock | WebSearchToolResultBlock) -> SessionUpdate:
    """What the editor sees of a provider-side search: a tool call and its outcome."""
    if isinstance(block, ServerToolUseBlock):
        query = str(block.input.get("query", ""))
        return ToolCall(
            tool_call_id=block.id,
            title=f"Web search: {query}" if query else block.name,
            tool_kind="fetch",
            status="in_progress",
            raw_input=block.input,
        )
    result = block
    if isinstance(result.content, WebSearchError):
        text = f"The search failed: {result.content.error_code}"
        return ToolCallUpdate(
            tool_call_id=result.tool_use_id,
            status="failed",
            content=[TextToolContent(text=text)],
        )
    lines = [f"- {r.title or r.url} ({r.url})" for r in result.content]
    return ToolCallUpdate(
        tool_call_id=result.tool_use_id,
        status="completed",
        content=[TextToolContent(text="\n".join(lines) or "No results.")],
        raw_output={"results": [{"title": r.title, "url": r.url} for r in result.content]},
    )
