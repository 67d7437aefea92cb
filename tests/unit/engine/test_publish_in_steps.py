"""Updates that are ready together (an answer read in one go) are published in steps, so the
event loop runs other work (the editor's messages first) between them; none is lost or
reordered, and the turn's end is still the last."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tether.protocol.content import TextContent
from tether.protocol.updates import AgentMessageChunk, SessionUpdate, TurnEnd
from tether.session import session as session_module

from .support import make_engine, text
from .test_late_prompts import make_session

WAIT = 5


async def test_a_burst_of_updates_leaves_room_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "PUBLISH_SLICE_S", -1.0)  # every ready update: a step
    words = [f"word{i} " for i in range(12)]
    engine = make_engine(tmp_path, [[text(w) for w in words]], [])
    session = make_session(engine)
    ticks = 0
    seen: list[tuple[int, SessionUpdate]] = []
    session.events.subscribe(lambda _turn, update: seen.append((ticks, update)))

    async def ticker() -> None:  # counts the loop's passes
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    counting = asyncio.create_task(ticker())
    try:
        result = await asyncio.wait_for(session.prompt([TextContent(text="go")]), WAIT)
    finally:
        counting.cancel()
    assert result.terminal.reason == "completed"
    chunks = [u.text for _, u in seen if isinstance(u, AgentMessageChunk)]
    assert "".join(chunks) == "".join(words)  # all of it, in order
    assert isinstance(seen[-1][1], TurnEnd)
    # The chunks came out of one response: other work ran between publishing them.
    chunk_ticks = [t for t, u in seen if isinstance(u, AgentMessageChunk)]
    assert len(set(chunk_ticks)) == len(chunk_ticks)
