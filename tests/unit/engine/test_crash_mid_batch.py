"""A crash (kill -9) while parallel tools run: the transcript as it stood on disk at that
moment resumes with the finished tool's real result, and the unfinished call is said to be
cut off by the session ending, not interrupted by the user."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from tether.core.messages import INTERRUPTED_TOOL_RESULT
from tether.transcript.resume import PARTLY_RAN, resume

from .support import Timeline, make_engine, text, timed_tool, use


async def test_finished_parallel_results_survive_a_crash(tmp_path: Path) -> None:
    timeline = Timeline()
    script = [
        [use("Fast", name="fast", delay=0.01), use("Slow", name="slow", delay=30)],
        [text("x")],
    ]
    engine = make_engine(
        tmp_path,
        script,
        [timed_tool("Fast", timeline, safe=True), timed_tool("Slow", timeline, safe=True)],
    )
    turn = asyncio.ensure_future(engine.run("go"))
    for _ in range(300):  # until the fast one ended and the file has had time to catch up
        if any(kind == "end" and name == "fast" for kind, name, _ in timeline.events):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    crashed = tmp_path / "crashed.jsonl"
    shutil.copy(tmp_path / "t.jsonl", crashed)  # the disk as a kill -9 would leave it
    engine.cancel()
    await turn
    await engine.close()

    resumed = resume(crashed, "s1")
    results = {r.tool_use_id: r for m in resumed.messages for r in m.tool_results}
    fast, slow = (u.id for m in resumed.messages for u in m.tool_uses)
    assert results[fast].text == "done fast" and not results[fast].is_error
    assert results[slow].is_error
    assert results[slow].text != INTERRUPTED_TOOL_RESULT  # not the user's doing
    assert results[slow].text == PARTLY_RAN or "ended unexpectedly" in results[slow].text
    assert any("1 finished result(s) kept" in note for note in resumed.repaired)
