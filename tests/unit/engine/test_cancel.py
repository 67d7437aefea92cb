"""Cancellation at any point ends the turn as aborted with a consistent history."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tether.core.messages import INTERRUPTED_TOOL_RESULT
from tether.permissions.policy import PermissionCheck
from tether.protocol.updates import TurnEnd
from tether.tools.base import ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.transcript.resume import resume

from .support import Timeline, make_engine, text, timed_tool, use
from .test_terminals import assert_well_formed


class Empty(BaseModel):
    pass


def blocking_tool(started: asyncio.Event, cancelled: asyncio.Event) -> Any:
    async def call(_data: Empty, _ctx: ToolContext) -> ToolResult:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolResult(content="unreachable")

    async def allow(_d: Empty, _c: ToolContext) -> PermissionCheck:
        return PermissionCheck("allow")

    return build_tool(
        name="Block",
        description="waits forever",
        input_model=Empty,
        call=call,
        check_permissions=allow,
    )


async def test_cancel_mid_stream(tmp_path: Path) -> None:
    script = [{"chunk_delay_ms": 40, "blocks": [text("a long answer " * 20)]}, [text("next")]]
    engine = make_engine(tmp_path, script, [])
    updates: list[Any] = []
    async for update in engine.submit("go"):
        updates.append(update)
        chunks = sum(1 for u in updates if u.kind == "agent_message_chunk")
        if update.kind == "agent_message_chunk" and chunks == 2:
            assert engine.cancel()
    end = updates[-1]
    assert isinstance(end, TurnEnd) and end.stop_reason == "cancelled"
    assert engine.last_result is not None and engine.last_result.terminal.reason == "aborted"
    # What the user saw is kept, followed by the interruption marker.
    assert engine.messages[1].role == "assistant" and engine.messages[1].text.startswith("a long")
    assert "[Request interrupted by user]" in engine.messages[-1].text
    assert_well_formed(engine.messages)
    # The session goes on.
    assert (await engine.run("again")).terminal.reason == "completed"


async def test_cancel_mid_stream_with_a_running_safe_tool(tmp_path: Path) -> None:
    timeline = Timeline()
    tools = [timed_tool("Safe", timeline, safe=True)]
    script = [
        {
            "chunk_delay_ms": 50,
            "blocks": [use("Safe", name="a", delay=5), text("more text " * 30)],
        }
    ]
    engine = make_engine(tmp_path, script, tools)
    updates: list[Any] = []
    async for update in engine.submit("go"):
        updates.append(update)
        if update.kind == "tool_call_update" and update.status == "in_progress":
            engine.cancel()
    assert updates[-1].stop_reason == "cancelled"
    assert_well_formed(engine.messages)
    result = engine.messages[2].tool_results[0]
    assert result.is_error and INTERRUPTED_TOOL_RESULT in result.text
    assert timeline.running == 0


async def test_cancel_mid_tool(tmp_path: Path) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()
    script = [[use("Safe", name="quick", delay=0), use("Block")], [text("after")]]
    tools = [blocking_tool(started, cancelled), timed_tool("Safe", Timeline(), safe=True)]
    engine = make_engine(tmp_path, script, tools)

    async def cancel_when_started() -> None:
        await started.wait()
        engine.cancel()

    canceller = asyncio.create_task(cancel_when_started())
    result_updates = [u async for u in engine.submit("go")]
    await canceller
    assert cancelled.is_set()
    assert result_updates[-1].stop_reason == "cancelled"
    assert_well_formed(engine.messages)
    quick, blocked = engine.messages[2].tool_results
    assert not quick.is_error and quick.text == "done quick"
    assert blocked.is_error and INTERRUPTED_TOOL_RESULT in blocked.text
    # The transcript tells the same story after a restart.
    assert engine.transcript is not None
    await engine.transcript.flush()
    resumed = resume(engine.transcript.path, "s1")
    assert_well_formed(resumed.messages)
    assert [m.role for m in resumed.messages] == [m.role for m in engine.messages]


async def test_consumer_going_away_cancels_the_turn(tmp_path: Path) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()
    engine = make_engine(tmp_path, [[use("Block")]], [blocking_tool(started, cancelled)])

    async def consume() -> None:
        async for _ in engine.submit("go"):
            pass

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert cancelled.is_set()
    assert not engine.busy
    assert engine.last_result is not None and engine.last_result.terminal.reason == "aborted"
    assert_well_formed(engine.messages)
