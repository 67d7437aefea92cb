"""Daemon-side time per model round-trip: from the end of a model response to the start of
the next request, for the 4-turn script of the foundation issue (three Reads in one message,
an Edit, a Bash echo, final text) against the fake Messages API, through the real engine,
tools and Anthropic SDK. Tool execution is reported separately, so the engine's own
overhead is visible. Target: under 10 ms per round-trip (engine overhead); the whole gap,
tools included, is the harness's time per round-trip (target <= 8 ms median).

The fake API runs in a process of its own, as the real API does (``long_session``'s
``FakeApiProcess``): in this process its request checks and rendering would take turns with
the harness for the interpreter lock, and their time would be counted as the harness's.
Its request and answer times come from its own clock (``time.monotonic``, shared by all
processes).

    python bench/turn_overhead.py [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import four_turn_script, ms, summary
from long_session import FakeApiProcess

from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.providers.anthropic import AnthropicProvider
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState
from tether.tools.registry import core_tools

FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"


async def one_run(root: Path) -> tuple[list[float], list[float]]:
    """Gaps between response end and next request, and tool time inside each gap."""
    with FakeApiProcess(root.parent, four_turn_script()) as api:
        provider = AnthropicProvider("claude-sonnet-4-6", api_key="bench", base_url=api.base_url)
        engine = QueryEngine(
            session_id="bench",
            cwd=root,
            provider=provider,
            tools=core_tools(),
            editor=DiskEditor(),
            state=SessionRunState(mode="bypassPermissions"),
            tasks=TaskRegistry(root / ".tasks"),
        )
        starts: dict[str, float] = {}
        tool_time = [0.0, 0.0, 0.0]
        round_index = 0
        async for update in engine.submit("go"):
            if update.kind == "usage":
                round_index = min(round_index + 1, 3)
            if update.kind == "tool_call_update" and update.status == "in_progress":
                starts[update.tool_call_id] = time.monotonic()
            if update.kind == "tool_call_update" and update.status in ("completed", "failed"):
                spent = time.monotonic() - starts.pop(update.tool_call_id)
                tool_time[round_index - 1] = max(tool_time[round_index - 1], spent)
        await provider.aclose()
    requests, answered = api.timings()
    gaps = [requests[i + 1] - answered[i] for i in range(len(requests) - 1)]
    return gaps, tool_time


async def main(runs: int) -> None:
    all_gaps: list[float] = []
    overhead: list[float] = []
    per_round: list[list[float]] = [[], [], []]
    tools: list[list[float]] = [[], [], []]
    for i in range(runs + 1):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "ws"
            shutil.copytree(FIXTURE, root)
            gaps, tool_time = await one_run(root)
        if i == 0:
            continue  # warm-up: SDK import, first connection
        for k, (gap, spent) in enumerate(zip(gaps, tool_time, strict=True)):
            all_gaps.append(gap)
            overhead.append(max(0.0, gap - spent))
            per_round[k].append(gap)
            tools[k].append(spent)
    labels = ["3 concurrent Reads", "Edit", "Bash echo"]
    print(f"turn overhead over {runs} runs of the 4-turn script ({len(all_gaps)} round-trips)")
    for label, gaps, spent in zip(labels, per_round, tools, strict=True):
        print(
            f"  after {label:<20} gap {summary(gaps)}; tool time median {ms(sorted(spent)[len(spent) // 2])}"
        )
    print(f"  round-trip gap (incl. tools): {summary(all_gaps)}")
    print(f"  engine overhead (gap minus tool time): {summary(overhead)}  [target < 10 ms]")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))
