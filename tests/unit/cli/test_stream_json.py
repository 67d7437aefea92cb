"""The stream-json encoder: a turn's updates become Claude Code's lines, and every line
parses into the Agent SDK's own types (its parser is the judge)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk._internal.message_parser import parse_message

from tether.cli.driver import McpServerState, SessionFacts, TurnOutcome
from tether.cli.stream_json import StreamJsonEncoder, tool_result_text
from tether.protocol.content import DiffContent, TerminalContent, TextToolContent
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Compaction,
    ModeChange,
    SessionUpdate,
    TaskUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    Usage,
    UsageUpdate,
)

FACTS = SessionFacts(
    session_id="s-1",
    cwd=Path("/work/app"),
    model="claude-sonnet-5-5",
    mode="default",
    tools=["Read", "Edit"],
    mcp_servers=[McpServerState("calc", "connected")],
    slash_commands=["review"],
    notes=[],
)
USAGE = Usage(input_tokens=100, output_tokens=20, cost_usd=0.001)


def usage(n: int) -> UsageUpdate:
    return UsageUpdate(input_tokens=100 * n, output_tokens=20 * n, context_window=200_000)


def read_call() -> ToolCall:
    return ToolCall(
        tool_call_id="t1",
        title="Read src/app.py",
        tool_kind="read",
        tool_name="Read",
        raw_input={"file_path": "src/app.py"},
    )


TURN: list[SessionUpdate] = [
    AgentThoughtChunk(text="Let me "),
    AgentThoughtChunk(text="look."),
    AgentMessageChunk(text="Read"),
    AgentMessageChunk(text="ing."),
    read_call(),
    ToolCallUpdate(tool_call_id="t1", status="in_progress"),
    usage(1),
    ToolCallUpdate(
        tool_call_id="t1",
        status="completed",
        content=[TextToolContent(text="1\tprint('hi')")],
        raw_output={"lines": 1},
    ),
    AgentMessageChunk(text="Done."),
    usage(2),
    TurnEnd(stop_reason="end_turn"),
]


def encode(updates: list[SessionUpdate], *, partial: bool = False) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    encoder = StreamJsonEncoder(
        lambda obj: lines.append(json.loads(json.dumps(obj))), partial=partial
    )
    encoder.begin_turn()
    encoder.init(FACTS)
    for update in updates:
        encoder.update(update)
    stop = next((u.stop_reason for u in updates if isinstance(u, TurnEnd)), "end_turn")
    reason = "completed" if stop == "end_turn" else "aborted"
    encoder.result(TurnOutcome(stop, reason, None if stop == "end_turn" else "stopped", USAGE))
    return lines


def test_a_turn_as_claude_code_writes_it() -> None:
    lines = encode(TURN)
    parsed = [parse_message(line) for line in lines]
    kinds = [type(m).__name__ for m in parsed]
    assert kinds == [
        "SystemMessage",
        "AssistantMessage",
        "AssistantMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    assert all(line["session_id"] == "s-1" and line["uuid"] for line in lines)
    init = parsed[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["tools"] == ["Read", "Edit"]
    assert init.data["mcp_servers"] == [{"name": "calc", "status": "connected"}]
    assert init.data["permissionMode"] == "default" and init.data["cwd"] == "/work/app"
    thinking, text, tool, result, answer, end = parsed[1:]
    assert isinstance(thinking, AssistantMessage)
    assert thinking.content == [ThinkingBlock(thinking="Let me look.", signature="")]
    assert isinstance(text, AssistantMessage) and text.content == [TextBlock(text="Reading.")]
    assert isinstance(tool, AssistantMessage)
    assert tool.content == [ToolUseBlock(id="t1", name="Read", input={"file_path": "src/app.py"})]
    # Blocks of one response share the message id; the next response has its own.
    assert thinking.message_id == text.message_id == tool.message_id
    assert isinstance(answer, AssistantMessage) and answer.message_id != tool.message_id
    assert thinking.model == "claude-sonnet-5-5" and thinking.parent_tool_use_id is None
    assert isinstance(result, UserMessage)
    assert result.content == [
        ToolResultBlock(tool_use_id="t1", content="1\tprint('hi')", is_error=None)
    ]
    assert result.tool_use_result == {"lines": 1}
    assert isinstance(end, ResultMessage)
    assert (end.subtype, end.is_error, end.num_turns, end.result) == ("success", False, 2, "Done.")
    assert end.total_cost_usd == 0.001 and end.usage is not None
    assert end.usage["input_tokens"] == 100 and end.stop_reason == "end_turn"


def test_partial_messages_follow_the_api_stream() -> None:
    lines = encode(TURN, partial=True)
    events = [parse_message(line) for line in lines]
    stream = [e.event for e in events if isinstance(e, StreamEvent)]
    assert [e["type"] for e in stream] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert stream[1]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert stream[2]["delta"] == {"type": "thinking_delta", "thinking": "Let me "}
    assert stream[7]["delta"] == {"type": "text_delta", "text": "ing."}
    assert stream[9]["content_block"]["name"] == "Read"
    assert json.loads(stream[10]["delta"]["partial_json"]) == {"file_path": "src/app.py"}
    assert stream[12]["delta"]["stop_reason"] == "tool_use"
    assert stream[12]["usage"]["output_tokens"] == 20
    assert stream[18]["delta"]["stop_reason"] == "end_turn"
    # As Claude Code does, a block's assistant message comes just before its stop event.
    kinds = [line["type"] for line in lines]
    first_stop = next(
        i
        for i, line in enumerate(lines)
        if line.get("event", {}).get("type") == "content_block_stop"
    )
    assert kinds[first_stop - 1] == "assistant"


def test_an_interrupted_tool_call_is_closed_like_claude_code() -> None:
    updates: list[SessionUpdate] = [
        ToolCall(
            tool_call_id="b1",
            title="sleep 30",
            tool_kind="execute",
            tool_name="Bash",
            raw_input={"command": "sleep 30"},
        ),
        usage(1),
        ToolCallUpdate(tool_call_id="b1", status="failed"),
        TurnEnd(stop_reason="cancelled"),
    ]
    parsed = [parse_message(line) for line in encode(updates)]
    tool_result, note, result = parsed[-3:]
    assert isinstance(tool_result, UserMessage)
    block = tool_result.content[0]
    assert isinstance(block, ToolResultBlock) and block.is_error
    assert "interrupted" in str(block.content)
    assert isinstance(note, UserMessage)
    assert note.content == [TextBlock(text="[Request interrupted by user for tool use]")]
    assert isinstance(result, ResultMessage)
    assert result.subtype == "error_during_execution" and result.is_error
    assert result.terminal_reason == "aborted"


def test_denials_compaction_mode_and_tasks() -> None:
    updates: list[SessionUpdate] = [
        read_call(),
        usage(1),
        ToolCallUpdate(tool_call_id="t1", status="failed", rejected="user"),
        Compaction(trigger="auto", tokens_before=150_000, tokens_after=9_000),
        Compaction(trigger="auto", tokens_before=1, tokens_after=0, strategy="microcompact"),
        ModeChange(mode="acceptEdits"),
        TaskUpdate(task_id="k1", status="running", description="npm test"),
        TaskUpdate(task_id="k1", status="running", description="npm test"),
        TaskUpdate(task_id="k1", status="completed", description="npm test", summary="passed"),
        TurnEnd(stop_reason="end_turn"),
    ]
    lines = encode(updates)
    parsed = [parse_message(line) for line in lines]
    rejected = next(m for m in parsed if isinstance(m, UserMessage))
    block = rejected.content[0]
    assert isinstance(block, ToolResultBlock) and block.is_error
    assert block.content == "Read was not run: the user said no"
    subtypes = [m.subtype for m in parsed if isinstance(m, SystemMessage)]
    assert subtypes == ["init", "compact_boundary", "status", "task_started", "task_notification"]
    boundary = next(line for line in lines if line.get("subtype") == "compact_boundary")
    assert boundary["compact_metadata"] == {"trigger": "auto", "pre_tokens": 150_000}
    result = parsed[-1]
    assert isinstance(result, ResultMessage)
    assert result.permission_denials == [
        {"tool_name": "Read", "tool_use_id": "t1", "tool_input": {"file_path": "src/app.py"}}
    ]


def test_tool_results_show_what_the_tool_showed() -> None:
    diff = DiffContent(uri="file:///a.py", old_text="x = 1\n", new_text="x = 2\n")
    text = tool_result_text([diff, TerminalContent(output="boom", exit_code=3)])
    assert "-x = 1\n+x = 2\n" in text
    assert text.endswith("boom\nExit code 3")


def test_a_region_diff_in_a_tool_result_is_numbered_as_in_the_file() -> None:
    diff = DiffContent(uri="file:///big.py", old_text="a\nb\nc\n", new_text="a\nB\nc\n", line=41)
    assert "@@ -42,3 +42,3 @@" in tool_result_text([diff])
