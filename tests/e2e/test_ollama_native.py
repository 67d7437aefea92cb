"""Ollama through its native API (``ollama:<model>``): every request carries the window the
session sizes its context to (``options.num_ctx``), so the compaction thresholds and the
server use one number and no prompt is cut or refused.

Real workspace files, the real engine and HTTP client against the fake Ollama, which
drops the oldest messages of a prompt over ``num_ctx`` as Ollama does unless told not to,
and records every cut and every request without ``num_ctx`` as a problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.protocol.updates import AgentMessageChunk, Compaction, Notice
from tether.testing.fake_ollama import FakeOllamaServer
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions

CALLS = 40
FINAL = "FINAL: all forty parts are read; each one lists its rows."
SUMMARY = "The user asked to read forty parts; the ones read so far list rows."
BYPASS = SessionOptions(mode="bypassPermissions")


def part(i: int) -> str:
    """About 2,000 tokens by the fakes' rule once Read numbers its lines."""
    return "".join(
        f"part {i:02d} row {r:02d}: {'the quick brown fox jumps ' * 4}\n" for r in range(60)
    )


def script(calls: int = CALLS) -> list[Any]:
    turns: list[Any] = [
        [
            {"type": "text", "text": f"Reading part {i}."},
            {"type": "tool_use", "name": "Read", "input": {"file_path": f"part{i:02d}.txt"}},
        ]
        for i in range(calls)
    ]
    return [*turns, [{"type": "text", "text": FINAL}]]


def workspace(tmp_path: Path, settings: dict[str, Any]) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    for i in range(CALLS):
        (root / f"part{i:02d}.txt").write_text(part(i))
    return Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        overrides=settings,
        user_settings=False,
        watch_settings=False,
    )


async def turn(ws: Workspace, calls: int = CALLS) -> tuple[QueryEngine, list[Any]]:
    engine = ws.new_session(DiskEditor(), BYPASS).engine
    updates = [u async for u in engine.submit(f"Read all {calls} parts, then summarise them.")]
    return engine, updates


def check(engine: QueryEngine, updates: list[Any], server: FakeOllamaServer, window: int) -> None:
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert "".join(u.text for u in updates if isinstance(u, AgentMessageChunk)).endswith(FINAL)
    # Every request said the window the session used; Ollama never had to cut or refuse.
    assert set(server.num_ctx) == {window}, server.num_ctx
    assert engine.provider.context_window == window
    assert engine.meter.context_window == window
    assert server.truncated == [] and server.rejected == []
    assert max(server.prompt_tokens) < window
    server.assert_complete()


@pytest.mark.parametrize("window", [12_000, 20_000])
async def test_a_long_turn_fits_the_window_ollama_loads(tmp_path: Path, window: int) -> None:
    """No setting: the window is the context Ollama loads the model with by itself; forty
    results of ~2,000 tokens are compacted to fit it, and each request says it."""
    with FakeOllamaServer(script(), context_window=window, served_model="qwen") as server:
        server.summary_reply = SUMMARY
        ws = workspace(tmp_path, {"model": f"ollama:qwen@{server.base_url}"})
        try:
            engine, updates = await turn(ws)
        finally:
            await ws.close()
    check(engine, updates, server, window)
    assert any(isinstance(u, Compaction) for u in updates)


async def test_the_window_setting_is_the_context_ollama_runs(tmp_path: Path) -> None:
    """Ollama's own default here (4096) cannot hold Tether's system prompt and tools; the
    setting is sent as num_ctx, so Ollama runs the model with it and the turn works."""
    with FakeOllamaServer(script(6), context_window=4_096, served_model="qwen") as server:
        server.summary_reply = SUMMARY
        settings = {
            "model": f"ollama:qwen@{server.base_url}",
            "modelOptions": {"contextWindow": 16_000},
        }
        ws = workspace(tmp_path, settings)
        try:
            engine, updates = await turn(ws, 6)
        finally:
            await ws.close()
    check(engine, updates, server, 16_000)


async def test_ollamas_own_small_default_stops_before_any_request_and_names_the_setting(
    tmp_path: Path,
) -> None:
    with FakeOllamaServer(script(3), context_window=4_096, served_model="qwen") as server:
        ws = workspace(tmp_path, {"model": f"ollama:qwen@{server.base_url}"})
        try:
            engine, _ = await turn(ws, 3)
        finally:
            await ws.close()
    assert engine.last_result is not None
    terminal = engine.last_result.terminal
    assert terminal.reason == "prompt_too_long", terminal
    assert "for a window of 4096 tokens" in terminal.message
    assert "A larger window: modelOptions.contextWindow (sent to Ollama as num_ctx" in (
        terminal.message
    )
    assert "/v1" not in terminal.message
    assert server.num_ctx == [] and server.truncated == []


async def test_a_count_that_leaves_out_the_cache_is_not_taken_for_a_cut(tmp_path: Path) -> None:
    """Ollama's prompt_eval_count without the KV cache's hit (fake: ``counts_cached``): with
    ``truncate: false`` Ollama refuses rather than cuts, so a low count is no cut, and the
    window stays what Ollama runs."""
    with FakeOllamaServer(
        script(12), context_window=32_768, served_model="qwen", counts_cached=False
    ) as server:
        server.summary_reply = SUMMARY
        ws = workspace(tmp_path, {"model": f"ollama:qwen@{server.base_url}"})
        try:
            engine, updates = await turn(ws, 12)
        finally:
            await ws.close()
    assert not [u for u in updates if isinstance(u, Notice)]
    check(engine, updates, server, 32_768)


class Untold(FakeOllamaServer):
    """An Ollama whose /api/show lists no trained length (older builds): a window set
    above it is sent, and Ollama runs the model with the trained length instead."""

    def serve_other(self, method: str, path: str, body: Any, reply: Any) -> bool:
        if path != "/api/show":
            return super().serve_other(method, path, body, reply)
        reply.json(200, {"parameters": "", "model_info": {}, "capabilities": ["completion"]})
        return True


async def test_a_refusal_names_the_context_ollama_really_runs_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    with Untold(script(20), served_model="qwen", trained_context=14_000) as server:
        server.summary_reply = SUMMARY
        settings = {
            "model": f"ollama:qwen@{server.base_url}",
            "modelOptions": {"contextWindow": 40_000},
        }
        ws = workspace(tmp_path, settings)
        try:
            engine, updates = await turn(ws, 20)
        finally:
            await ws.close()
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert "".join(u.text for u in updates if isinstance(u, AgentMessageChunk)).endswith(FINAL)
    # One refusal named the real context; from then on every request was sized to it.
    assert len(server.rejected) == 1 and "(14000 tokens)" in server.rejected[0].message
    assert engine.provider.context_window == 14_000 == engine.meter.context_window
    refused = server.refused_at[0]
    assert set(server.num_ctx[refused + 1 :]) == {14_000}
    assert server.truncated == [] and max(server.prompt_tokens) < 14_000


async def test_a_subagent_on_ollama_says_the_same_window(tmp_path: Path) -> None:
    """The Agent tool's conversation goes through the same provider: its requests carry
    num_ctx too, and its tool results name their tools."""
    agent = {
        "type": "tool_use",
        "name": "Agent",
        "input": {"description": "look", "prompt": "read part00.txt", "subagent_type": "explore"},
    }
    read = {"type": "tool_use", "name": "Read", "input": {"file_path": "part00.txt"}}
    steps = [
        [agent],
        [read],
        [{"type": "text", "text": "FOUND: part 00 lists rows"}],
        {"expect": {"contains": "FOUND"}, "blocks": [{"type": "text", "text": FINAL}]},
    ]
    with FakeOllamaServer(steps, context_window=16_384, served_model="qwen") as server:
        ws = workspace(tmp_path, {"model": f"ollama:qwen@{server.base_url}"})
        try:
            engine, updates = await turn(ws, 1)
        finally:
            await ws.close()
    check(engine, updates, server, 16_384)
    subagent_result = server.requests[2]["messages"][-1]
    assert subagent_result["role"] == "tool" and subagent_result["tool_name"] == "Read"
