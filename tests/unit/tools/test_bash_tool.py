"""Bash: output, exit codes, timeouts and cancellation that kill the whole process group,
the output cap, live streaming, background tasks with TaskOutput / TaskStop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tether.protocol.content import TerminalContent
from tether.protocol.updates import SessionUpdate, ToolCallUpdate
from tether.tools.base import ToolResult
from tether.tools.bash import BASH_TOOL, make_bash_tool
from tether.tools.context import ToolContext
from tether.tools.task_tools import TASK_OUTPUT_TOOL, TASK_STOP_TOOL

Run = Callable[..., Awaitable[ToolResult]]
# Two background sleeps and the shell itself, each pid written where the test can find it.
SLEEPERS = "sleep 100 & echo $! > pids; sleep 100 & echo $! >> pids; echo $$ >> pids; wait"


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for PID 1 to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: fall back to a signal probe
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


async def wait_for_pids(path: Path, count: int) -> list[int]:
    for _ in range(500):
        # Only whole lines: a PID being written may be cut short ("12" of "12345").
        text = path.read_text() if path.exists() else ""
        pids = [int(x) for x in text[: text.rfind("\n") + 1].split()]
        if len(pids) >= count:
            return pids
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never listed {count} pids")


async def all_dead(pids: list[int], timeout: float = 10) -> bool:
    """Wait for each process to end: its pidfd becomes readable when it exits (an event,
    not a guess at how long the kernel takes under load); ``timeout`` only bounds a bug."""
    loop = asyncio.get_running_loop()

    async def ended(pid: int) -> None:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            return
        exited = loop.create_future()
        loop.add_reader(fd, lambda: exited.done() or exited.set_result(None))
        try:
            await exited
        finally:
            loop.remove_reader(fd)
            os.close(fd)

    try:
        await asyncio.wait_for(asyncio.gather(*(ended(p) for p in pids)), timeout)
    except TimeoutError:
        return False
    return not any(alive(p) for p in pids)


async def test_output_in_order_and_success(run: Run, workspace: Path) -> None:
    result = await run(BASH_TOOL, {"command": "echo out; echo err >&2; pwd"})
    assert not result.is_error
    assert result.content == f"out\nerr\n{workspace}"
    (terminal,) = result.display
    assert isinstance(terminal, TerminalContent) and terminal.exit_code == 0


async def test_nonzero_exit_is_an_error(run: Run) -> None:
    result = await run(BASH_TOOL, {"command": "echo partial; exit 3"})
    assert result.is_error and result.content == "Exit code 3\npartial"
    quiet = await run(BASH_TOOL, {"command": "true"})
    assert quiet.content == "(no output)"


async def test_no_match_from_grep_is_an_answer_not_a_failure(run: Run, workspace: Path) -> None:
    (workspace / "f.txt").write_text("abc\n")
    result = await run(BASH_TOOL, {"command": "grep zzz f.txt"})
    assert not result.is_error and "Exit code 1" in str(result.content)
    piped = await run(BASH_TOOL, {"command": "grep zzz f.txt | cat; exit 1"})
    assert piped.is_error


async def test_timeout_kills_the_whole_group(run: Run, workspace: Path) -> None:
    result = await run(BASH_TOOL, {"command": SLEEPERS, "timeout": 400})
    assert result.is_error
    assert str(result.content).startswith("Command timed out after 0.4s")
    pids = await wait_for_pids(workspace / "pids", 3)
    assert await all_dead(pids), [p for p in pids if alive(p)]


async def test_cancellation_kills_the_whole_group(ctx: ToolContext, workspace: Path) -> None:
    call = asyncio.create_task(BASH_TOOL.call(BASH_TOOL.input_model(command=SLEEPERS), ctx))
    pids = await wait_for_pids(workspace / "pids", 3)
    assert all(alive(p) for p in pids)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await all_dead(pids), [p for p in pids if alive(p)]


async def test_children_left_holding_the_output_are_stopped(run: Run, workspace: Path) -> None:
    result = await run(BASH_TOOL, {"command": "sleep 100 & echo $! > pids; echo done"})
    assert not result.is_error
    assert str(result.content).startswith("done") and "were stopped" in str(result.content)
    assert await all_dead(await wait_for_pids(workspace / "pids", 1))


async def test_output_is_capped_in_the_middle(run: Run, ctx: ToolContext) -> None:
    ctx.config.bash_max_output_chars = 200
    result = await run(BASH_TOOL, {"command": "seq 1 2000"})
    text = str(result.content)
    assert text.startswith("1\n2\n3\n") and text.endswith("1999\n2000")
    assert "lines cut ...]" in text and len(text) < 300


async def test_live_output_is_streamed(
    run: Run, updates: list[SessionUpdate], ctx: ToolContext
) -> None:
    await run(BASH_TOOL, {"command": "echo first; sleep 0.5; echo second"})
    outputs = [
        c.output
        for u in updates
        if isinstance(u, ToolCallUpdate) and u.tool_call_id == ctx.tool_use_id
        for c in u.content or []
        if isinstance(c, TerminalContent)
    ]
    assert outputs[0] == "first\n"  # seen while the command was still running
    assert outputs[-1] == "first\nsecond\n"


async def test_wrap_seam_transforms_argv(run: Run) -> None:
    wrapped = make_bash_tool(wrap=lambda argv: ["env", "WRAPPED=yes", *argv])
    result = await run(wrapped, {"command": "echo $WRAPPED"})
    assert result.content == "yes"


async def test_background_task_output_and_stop(run: Run, ctx: ToolContext, workspace: Path) -> None:
    started = await run(
        BASH_TOOL, {"command": "echo hello; echo oops >&2; exit 4", "run_in_background": True}
    )
    assert not started.is_error
    assert isinstance(started.raw_output, dict)
    task_id = started.raw_output["task_id"]
    assert f"ID: {task_id}" in str(started.content)
    out = await run(TASK_OUTPUT_TOOL, {"task_id": task_id, "timeout": 5000})
    text = str(out.content)
    assert "<status>failed</status>" in text and "<exit_code>4</exit_code>" in text
    assert "hello\noops" in text

    long = await run(
        BASH_TOOL, {"command": "sleep 100 & echo $! > pids; wait", "run_in_background": True}
    )
    long_id = long.raw_output["task_id"] if isinstance(long.raw_output, dict) else ""
    pids = await wait_for_pids(workspace / "pids", 1)
    peek = await run(TASK_OUTPUT_TOOL, {"task_id": long_id, "block": False})
    assert "<status>running</status>" in str(peek.content)
    stopped = await run(TASK_STOP_TOOL, {"shell_id": long_id})
    assert not stopped.is_error
    task = ctx.tasks.get(long_id)
    assert task is not None and task.status == "killed"
    assert await all_dead(pids)
    again = await run(TASK_STOP_TOOL, {"task_id": long_id})
    assert again.is_error and "not running" in str(again.content)


async def test_unknown_task_ids(run: Run) -> None:
    for tool in (TASK_OUTPUT_TOOL, TASK_STOP_TOOL):
        result = await run(tool, {"task_id": "nope"})
        assert result.is_error and "No background task" in str(result.content)


async def test_permissions_follow_the_read_only_verdict(ctx: ToolContext) -> None:
    ls = BASH_TOOL.input_model(command="ls -la | grep x", description="List files")
    rm = BASH_TOOL.input_model(command="rm -rf build")
    assert BASH_TOOL.is_read_only(ls) and BASH_TOOL.is_concurrency_safe(ls)
    assert not BASH_TOOL.is_read_only(rm) and not BASH_TOOL.is_concurrency_safe(rm)
    # Whether a reader may run depends on where its paths lead: the policy decides that.
    assert (await BASH_TOOL.check_permissions(ls, ctx)).behavior == "passthrough"
    assert (await BASH_TOOL.check_permissions(rm, ctx)).behavior == "passthrough"
    assert BASH_TOOL.title(ls) == "List files" and BASH_TOOL.title(rm) == "rm -rf build"
    assert BASH_TOOL.rule_content(rm) == "rm -rf build" and BASH_TOOL.kind == "execute"
