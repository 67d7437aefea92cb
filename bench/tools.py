"""Deferred tools: what they save per request, and what the discovery scan costs.

1. Tool-schema bytes per request with 150 MCP tools (the SDK test server over stdio, real
   engine, real Anthropic SDK against the fake Messages API), with the tools sent in full
   and with them deferred behind ToolSearch. The script searches for three tools, calls
   one, and ends; the bytes are those of the ``tools`` array of each recorded request.
   Target: deferred <= 10% of not deferred.
2. The discovery scan over a 1,000-message history: the per-request cost (the scan is
   incremental: a request adds a couple of messages) and the worst case (a full rescan,
   after compaction or resume). Target: < 1 ms per request.
3. Grep without ripgrep: the fallback search runs in a child interpreter (a backtracking
   pattern must not stall the daemon); its cost against the same search in a thread, for
   one file and for a 500-file tree.

    python bench/tools.py [--runs 200] [--grep-only]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms

from tether.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.mcp import McpManager, McpOptions, parse_server
from tether.mcp.attach import attach
from tether.mcp.tools import wrap_tool
from tether.providers.anthropic import AnthropicProvider
from tether.tasks.registry import TaskRegistry
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.tools.base import Tool
from tether.tools.context import SessionRunState
from tether.tools.pool import DeferralPolicy, ToolPool, reference
from tether.tools.registry import core_tools

SERVER = Path(__file__).resolve().parent.parent / "tests" / "support" / "mcp_server.py"
FOUND = ["mcp__t__slack_create", "mcp__t__issues_search", "mcp__t__calendar_list"]


def script(deferred: bool) -> list[Any]:
    def tool(name: str, **inp: Any) -> dict[str, Any]:
        return {"type": "tool_use", "name": name, "input": inp}

    turns: list[Any] = [[tool("ToolSearch", query="select:" + ",".join(FOUND))]] if deferred else []
    return [*turns, [tool(FOUND[0], id="c1")], [{"type": "text", "text": "Done."}]]


async def request_bytes(root: Path, manager: McpManager, policy: DeferralPolicy) -> list[int]:
    deferred = policy.mode == "always"
    with FakeAnthropicServer(script(deferred)) as api:
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
        detach = attach(engine, manager, policy)
        await engine.run("post to slack")
        detach()
        await engine.close()
        await provider.aclose()
        api.assert_complete()
        return [len(json.dumps(b["tools"], separators=(",", ":"))) for b in api.requests]


async def schema_bytes() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = parse_server(
            "t", {"command": sys.executable, "args": [str(SERVER), "--generated-only"]}
        )
        manager = McpManager(root, [server], McpOptions(log_dir=root / "logs"))
        manager.start()
        await manager.wait_ready(timeout=30)
        count = manager.statuses()[0].tools
        full = await request_bytes(root, manager, DeferralPolicy(mode="never"))
        deferred = await request_bytes(root, manager, DeferralPolicy(mode="always"))
        auto = DeferralPolicy().defer(manager.tools(), 200_000)
        await manager.close()
        no_mcp = McpManager(root, [], McpOptions(log_dir=root / "logs"))
        core_bytes = (await request_bytes(root, no_mcp, DeferralPolicy(mode="never")))[0]
    print(f"tool-schema bytes per request, {count} MCP tools (core tools alone: {core_bytes})")
    print(f"  sent in full:  {', '.join(str(b) for b in full)}")
    print(f"  deferred:      {', '.join(str(b) for b in deferred)}")
    print("                 (request 1: core + ToolSearch; then + the 3 tools it found)")
    first = deferred[0] / full[0]
    mcp_full = full[0] - core_bytes
    mcp_deferred = deferred[0] - core_bytes
    print(
        f"  first request: {first:.1%} of sending everything; MCP part alone "
        f"{mcp_deferred} vs {mcp_full} bytes = {mcp_deferred / mcp_full:.1%}  [target <= 10%]"
    )
    after = deferred[1] / full[0]
    print(f"  after discovering 3 tools: {after:.1%}; the default policy defers them: {auto}")


def history(n: int, tools: list[str]) -> list[Message]:
    """``n`` messages: assistant tool calls and tool results of ~500 characters, a search
    result with references every 50 messages."""
    out: list[Message] = []
    for i in range(n // 2):
        use = ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": f"src/f{i}.py"})
        out.append(Message(role="assistant", content=[TextBlock(text="Reading."), use]))
        text = "x = 1\n" * 80
        if i % 25 == 0:  # a ToolSearch result naming 3 of 12 tools the session uses
            text = "\n".join(reference(tools[(i // 25 + k) % 12]) for k in range(3))
        result = ToolResultBlock(tool_use_id=f"t{i}", content=[TextBlock(text=text)])
        out.append(Message(role="user", content=[result]))
    return out


def generated_tools() -> list[Tool[Any]]:
    """The server's 150 tools, wrapped in-process (the scan needs no connection)."""
    spec = importlib.util.spec_from_file_location("tether_bench_mcp_server", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    async def unused(_name: str, _args: dict[str, Any]) -> Any:
        raise AssertionError("not called")

    return [wrap_tool("t", t, unused) for t in module.GENERATED]


def scan_cost(runs: int) -> None:
    tools = generated_tools()
    pool = ToolPool(core_tools())
    for tool in tools:
        pool.add(tool, deferred=True)
    names = [t.name for t in tools]
    messages = history(1000, names)
    pool.specs(messages)
    per_request: list[float] = []
    full: list[float] = []
    specs: list[float] = []
    gc.collect()
    gc.disable()  # as timeit does: a collector pause is not the scan's cost
    for _i in range(runs):
        # A request's worth of new history: one tool call and its result.
        messages.extend(history(2, names))
        start = time.perf_counter()
        pool.scan(messages)
        per_request.append(time.perf_counter() - start)
        start = time.perf_counter()
        pool.specs(messages)
        specs.append(time.perf_counter() - start)
        copy = list(messages[:1000])
        start = time.perf_counter()
        pool.scan(copy)  # a new list: scanned from the start
        full.append(time.perf_counter() - start)
        pool.scan(messages)
    print(
        f"discovery scan over a {len(messages[:1000])}-message history ({len(pool.discovered)} found)"
    )
    print(f"  per request (incremental scan):  {micro(per_request)}  [target < 1 ms]")
    print(f"  whole tool list (specs()):       {micro(specs)}")
    print(f"  full rescan (after compaction):  {micro(full)}; worst {ms(max(full))}")


def micro(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered) * 1e6:.0f} µs, p99 {p99 * 1e6:.0f} µs"


async def grep_fallback_cost(runs: int = 10) -> None:
    from tether.tools.grep_python import GrepQuery, search_python
    from tether.tools.grep_worker import search_in_child

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(500):
            sub = root / f"pkg{i % 20}"
            sub.mkdir(exist_ok=True)
            (sub / f"mod{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n" * 40)
        print(f"Grep without ripgrep: in a thread vs in a child interpreter (median of {runs})")
        for label, where in (("one file", root / "pkg0" / "mod0.py"), ("500 files", root)):
            q = GrepQuery(pattern=r"return x \+ 1\d", root=where, mode="content")
            thread: list[float] = []
            child: list[float] = []
            for _ in range(runs):
                start = time.perf_counter()
                expected = await asyncio.to_thread(search_python, q)
                thread.append(time.perf_counter() - start)
                start = time.perf_counter()
                got = await search_in_child(q)
                child.append(time.perf_counter() - start)
                assert [h.path for h in got] == [h.path for h in expected]
            t, c = statistics.median(thread), statistics.median(child)
            print(f"  {label:9}  thread {ms(t)}, child {ms(c)} ({c / t:.1f}x, +{ms(c - t)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--grep-only", action="store_true")
    args = parser.parse_args()
    if not args.grep_only:
        asyncio.run(schema_bytes())
        scan_cost(args.runs)
    asyncio.run(grep_fallback_cost())


if __name__ == "__main__":
    main()
