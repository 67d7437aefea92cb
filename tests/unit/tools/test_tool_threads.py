"""Slow or stuck tool file work never takes the daemon's threads, never holds a cancelled
turn, and a Read of a few lines of a huge file reads no more than those lines."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tether.core.files import MAX_TEXT_FILE_BYTES
from tether.core.tool_threads import Stop, Stopped, ToolThreads
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.edit import EDIT_TOOL
from tether.tools.read import READ_TOOL
from tether.tools.read_lines import read_line_range

Run = Callable[..., Awaitable[ToolResult]]


def _bytes_read() -> int:
    """Bytes this process has read through system calls (``rchar``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_a_few_lines_of_a_huge_file_read_only_those_lines(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.write(b"2026-12-07 INFO request ok\n" * 1000)
        f.truncate(8 << 30)  # sparse: 8 GB of NULs after the first lines
    before = _bytes_read()
    got = read_line_range(big, 101, 100, 2000, hash_limit=MAX_TEXT_FILE_BYTES, stop=Stop())
    assert _bytes_read() - before < 4 << 20, "the read went on past the lines asked for"
    assert got.lines == ["2026-12-07 INFO request ok"] * 100
    assert got.total is None and got.hash is None  # too large to edit: uncounted, unhashed


async def test_read_of_a_huge_file_says_how_to_go_on(run: Run, workspace: Path) -> None:
    big = workspace / "big.log"
    with big.open("wb") as f:
        f.write(b"line\n" * 20_000)
        f.truncate(MAX_TEXT_FILE_BYTES + 1)
    result = await asyncio.wait_for(run(READ_TOOL, {"file_path": "big.log", "offset": 3}), 20)
    text = str(result.content)
    assert not result.is_error, text
    assert text.startswith("3\tline\n") and "too large to count its lines" in text
    head = await run(READ_TOOL, {"file_path": "big.log", "offset": 1, "limit": 2})
    assert head.content == "1\tline\n2\tline"


async def test_stuck_tool_threads_leave_the_daemon_threads_and_other_lanes_alone() -> None:
    pool = ToolThreads(workers=8)
    release = threading.Event()
    greedy, other = pool.lane(share=3), pool.lane(share=3)
    stuck = [asyncio.ensure_future(greedy.run(release.wait)) for _ in range(5)]
    try:
        await asyncio.sleep(0.05)
        # The loop's own executor (what handlers such as listSessions use) is free...
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "handler"), 5) == "handler"
        # ...and so is another session's lane, though one lane waits on its share.
        assert await asyncio.wait_for(other.run(lambda: "other"), 5) == "other"
        assert not any(task.done() for task in stuck)
        # Cancelling the stuck calls returns at once, threads still running.
        for task in stuck:
            task.cancel()
        done, _ = await asyncio.wait(stuck, timeout=5)
        assert len(done) == 5 and all(task.cancelled() for task in stuck)
        # Those threads keep their places until they end: cancelling piles up nothing.
        late = asyncio.ensure_future(greedy.run(lambda: "late"))
        await asyncio.sleep(0.05)
        assert not late.done()
    finally:
        release.set()
    assert await asyncio.wait_for(late, 5) == "late"


async def test_a_cancelled_call_tells_its_thread_to_stop() -> None:
    lane = ToolThreads(workers=2).lane()
    started, ended = threading.Event(), threading.Event()
    outcome: list[str] = []

    def work(stop: Stop) -> str:
        started.set()
        try:
            while True:
                stop.check()
                ended.wait(0.01)
        except Stopped:
            outcome.append("stopped")
            raise

    call = asyncio.ensure_future(lane.run_stoppable(work))
    assert await asyncio.to_thread(started.wait, 5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(call, 5)
    for _ in range(500):
        if outcome:
            break
        await asyncio.sleep(0.01)
    assert outcome == ["stopped"]


async def test_a_cancelled_read_ends_at_once_while_its_disk_read_hangs(
    run: Run, ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.tools.read as read

    (workspace / "slow.txt").write_text("a\nb\n")
    release, entered = threading.Event(), threading.Event()

    def hung(*_args: object, **_kwargs: object) -> object:  # a network mount that hangs
        entered.set()
        release.wait()
        raise OSError("gone")

    monkeypatch.setattr(read, "read_line_range", hung)
    call = asyncio.ensure_future(run(READ_TOOL, {"file_path": "slow.txt", "offset": 2}))
    try:
        assert await asyncio.to_thread(entered.wait, 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, 5)
    finally:
        release.set()


async def test_edit_refuses_a_huge_file_before_reading_it(
    run: Run, ctx: ToolContext, workspace: Path
) -> None:
    with (workspace / "big.log").open("wb") as f:
        f.write(b"line one\n" * 4000)
        f.truncate(3 << 30)
    before = _bytes_read()
    read = await run(READ_TOOL, {"file_path": "big.log", "offset": 1, "limit": 2})
    assert read.content == "1\tline one\n2\tline one"
    edit = {"file_path": "big.log", "old_string": "line one", "new_string": "x"}
    result = await run(EDIT_TOOL, edit)
    assert _bytes_read() - before < 4 << 20, "the file was read whole"
    assert result.is_error and f"is {3 << 30} bytes" in str(result.content)
    assert "offset and limit" in str(result.content)
