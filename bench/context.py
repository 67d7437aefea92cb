"""Context numbers for a 50-turn scripted session (big tool results every turn):

- request bytes per turn, with the compaction ladder and without it
- the share of input tokens that would be cache reads, given where the breakpoints sit
- time to assemble the context of one request over 100k tokens of history
  (target < 2 ms median)

    python bench/context.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import summary

from tether.context.compaction import CompactionSettings
from tether.context.tokens import estimate_text
from tether.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.providers.convert_anthropic import request_params
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState
from tether.tools.registry import core_tools

TURNS = 50


def script() -> list[Any]:
    turns: list[Any] = []
    for i in range(TURNS - 1):
        command = f"python3 -c \"print('result {i} ' * 700)\""  # ~7 KB of output per turn
        turns.append(
            [
                {"type": "text", "text": f"Step {i}."},
                {"type": "tool_use", "name": "Bash", "input": {"command": command}},
            ]
        )
    turns.append([{"type": "text", "text": "Done."}])
    return turns


def body_of(request: Any) -> dict[str, Any]:
    params = request_params(request, max_tokens=request.max_tokens)
    return {"system": params.system, "tools": params.tools, "messages": params.messages}


async def run_session(root: Path, ladder: bool) -> list[dict[str, Any]]:
    provider = ScriptedProvider(parse_script(script()), context_window=60_000)
    engine = QueryEngine(
        session_id="bench",
        cwd=root,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(),
        state=SessionRunState(mode="bypassPermissions"),
        tasks=TaskRegistry(root / ".tasks"),
    )
    if not ladder:
        engine.compactor.settings = CompactionSettings(
            auto=False, tool_result_max_chars=10**9, warning_threshold=10**9, auto_threshold=10**9
        )
    else:  # rungs (a) and (b); a summary would need a model turn the script does not have
        engine.compactor.settings = CompactionSettings(auto=False, tool_result_max_chars=4_000)
    await engine.run("Run all the steps")
    await engine.close()
    return [body_of(r) for r in provider.requests]


def tokens_of(obj: Any) -> int:
    return estimate_text(json.dumps(obj))


def cache_share(bodies: list[dict[str, Any]]) -> float:
    """Input tokens that would be cache reads: a request reads from the cache the longest
    prefix (up to a breakpoint) that the previous request wrote."""
    total = read = 0
    previous: dict[str, Any] | None = None
    for body in bodies:
        total += tokens_of(body)
        if (
            previous is not None
            and body["tools"] == previous["tools"]
            and body["system"] == previous["system"]
        ):
            cached = 0
            prev_messages = previous["messages"]
            # The previous request's breakpoint was its last message: a hit if unchanged.
            if _strip(body["messages"][: len(prev_messages)]) == _strip(prev_messages):
                cached = tokens_of(
                    {"tools": body["tools"], "system": body["system"], "messages": prev_messages}
                )
            else:
                cached = tokens_of({"tools": body["tools"], "system": body["system"]})
            read += cached
        previous = body
    return read / total if total else 0.0


def _strip(messages: list[Any]) -> list[Any]:
    """Messages without cache_control markers (they move as the history grows)."""
    text = json.dumps(messages).replace(', "cache_control": {"type": "ephemeral"}', "")
    return json.loads(text)


async def assembly_time(root: Path) -> list[float]:
    provider = ScriptedProvider(parse_script([]), context_window=400_000)
    engine = QueryEngine(
        session_id="bench",
        cwd=root,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(),
        tasks=TaskRegistry(root / ".tasks"),
    )
    history: list[Message] = []
    while engine.compactor.counter.messages(history) < 100_000:
        i = len(history)
        history.append(user_text(f"request {i} " * 40))
        use = ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": f"f{i}.py"})
        history.append(Message(role="assistant", content=[TextBlock(text="Reading. " * 30), use]))
        result = ToolResultBlock(
            tool_use_id=f"t{i}", content=[TextBlock(text="1\tcode line\n" * 120)]
        )
        history.append(Message(role="user", content=[result]))
    engine.messages.extend(history)
    engine.compactor.settings = CompactionSettings(auto_threshold=10**9, warning_threshold=10**9)

    async def once() -> float:
        started = time.perf_counter()
        await engine.compactor.before_request(engine, "t", lambda _u: None)
        engine.assembler.request(engine.messages, engine.tool_specs())
        return time.perf_counter() - started

    return [await once() for _ in range(100)][5:]


async def main() -> None:
    with tempfile.TemporaryDirectory() as raw:
        root = Path(raw)
        without = await run_session(root, ladder=False)
        with_ladder = await run_session(root, ladder=True)
        for label, bodies in (("without the ladder", without), ("with the ladder", with_ladder)):
            sizes = [len(json.dumps(b)) for b in bodies]
            print(
                f"request bytes per turn {label}: mean {statistics.mean(sizes):,.0f}, "
                f"last {sizes[-1]:,}, total {sum(sizes):,} over {len(sizes)} requests"
            )
        print(
            f"input tokens that would be cache reads: {cache_share(with_ladder):.1%} (with the ladder), "
            f"{cache_share(without):.1%} (without)"
        )
    with tempfile.TemporaryDirectory() as raw:
        samples = await assembly_time(Path(raw))
        print(
            f"context assembly at 100k tokens of history: {summary(samples)}  [target median < 2 ms]"
        )


if __name__ == "__main__":
    asyncio.run(main())
