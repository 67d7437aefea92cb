"""No request is sent that Tether's own count says cannot fit the known window; a prompt a
server cut silently is noticed; a refusal that counted the reply against the window is met
with a smaller ``max_tokens``.

Real workspace files, the real engine, the real SDK and HTTP clients against the strict
fakes (Ollama's ``/v1`` cuts a prompt over its context instead of refusing it, and the fake
records each cut in ``truncated``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.protocol.updates import AgentMessageChunk, Notice
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions

BYPASS = SessionOptions(mode="bypassPermissions")
FINAL = "FINAL ANSWER"
SUMMARY = "The user asked to read the parts; those read so far list rows."


def part(i: int) -> str:
    return "".join(f"part {i:02d} row {r:02d}: {'the quick brown fox ' * 4}\n" for r in range(30))


def reads(batches: int, per_batch: int = 1) -> list[Any]:
    turns: list[Any] = [
        [
            {
                "type": "tool_use",
                "name": "Read",
                "input": {"file_path": f"part{b * per_batch + j:02d}.txt"},
            }
            for j in range(per_batch)
        ]
        for b in range(batches)
    ]
    return [*turns, [{"type": "text", "text": FINAL}]]


def workspace(tmp_path: Path, model: str, parts: int) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    for i in range(parts):
        (root / f"part{i:02d}.txt").write_text(part(i))
    return Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        overrides={"model": model},
        user_settings=False,
        watch_settings=False,
    )


async def turn(ws: Workspace) -> tuple[QueryEngine, list[Any]]:
    engine = ws.new_session(DiskEditor(), BYPASS).engine
    updates = [u async for u in engine.submit("Read the parts, then answer.")]
    return engine, updates


def text_of(updates: list[Any]) -> str:
    return "".join(u.text for u in updates if isinstance(u, AgentMessageChunk))


@pytest.mark.parametrize("window", [2_048, 4_096])
async def test_ollama_smaller_than_the_prompt_and_tools_stops_before_any_request(
    tmp_path: Path, window: int
) -> None:
    """Ollama's default context (reported by /api/ps): Tether's own system prompt and tools
    do not fit. Nothing is sent to be cut; the turn says so with the numbers."""
    with FakeOpenAIServer(
        reads(3), context_window=window, flavor="ollama", served_model="qwen"
    ) as server:
        ws = workspace(tmp_path, f"openai:qwen@{server.base_url}", 3)
        try:
            engine, _ = await turn(ws)
        finally:
            await ws.close()
    assert engine.last_result is not None
    terminal = engine.last_result.terminal
    assert terminal.reason == "prompt_too_long", terminal
    assert f"for a window of {window} tokens" in terminal.message
    assert "the system prompt and tools take about" in terminal.message
    assert "OLLAMA_CONTEXT_LENGTH" in terminal.message
    assert server.prompt_tokens == [] and server.truncated == []


async def test_ollama_small_window_long_turn_is_never_cut(tmp_path: Path) -> None:
    """An 8k context: each batch of results nearly fills it. Every request is compacted to
    fit before it is sent; Ollama never has to cut one."""
    with FakeOpenAIServer(
        reads(6, per_batch=3), context_window=8_192, flavor="ollama", served_model="qwen"
    ) as server:
        server.summary_reply = SUMMARY
        ws = workspace(tmp_path, f"openai:qwen@{server.base_url}", 18)
        try:
            engine, updates = await turn(ws)
        finally:
            await ws.close()
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert text_of(updates).endswith(FINAL)
    assert server.truncated == [] and max(server.prompt_tokens) < 8_192
    server.assert_complete()


class Shrinking(FakeOpenAIServer):
    """Ollama restarted with a smaller context mid-turn (what /api/ps then reports too)."""

    after = 4
    smaller = 9_000

    def reject(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any] | None:
        if len(self.requests) >= self.after:
            self.context_window = self.smaller
        return super().reject(body, headers)


async def test_a_prompt_the_server_cut_is_noticed_and_not_taken_as_the_size(
    tmp_path: Path,
) -> None:
    with Shrinking(
        reads(14), context_window=32_768, flavor="ollama", served_model="qwen"
    ) as server:
        server.summary_reply = SUMMARY
        ws = workspace(tmp_path, f"openai:qwen@{server.base_url}", 14)
        try:
            engine, updates = await turn(ws)
        finally:
            await ws.close()
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert text_of(updates).endswith(FINAL)
    # One request was cut before Tether could know (the /v1 route cannot be told): it was
    # noticed from the count, the window asked again, and nothing was cut after it.
    assert len(server.truncated) == 1, server.truncated
    cut = [u for u in updates if isinstance(u, Notice) and "cut the prompt" in u.message]
    assert len(cut) == 1 and cut[0].level == "warning"
    assert "an ollama:<model> spec sets it per request" in cut[0].message
    assert engine.provider.context_window == 9_000
    assert engine.meter.context_window == 9_000
    assert server.errors == [] and server.remaining == 0


async def test_a_window_that_bounds_the_reply_too_lowers_max_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``input length and `max_tokens` exceed context limit: X + Y > Z``: the prompt fits,
    the reply's room does not. The request is retried with a smaller ``max_tokens`` (not
    compacted), and every later request leaves the reply only what the window has."""
    with FakeAnthropicServer(reads(6), context_window=12_000, window_counts_output=True) as api:
        api.summary_reply = SUMMARY
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        ws = workspace(tmp_path, "anthropic:claude-3-5-haiku-20241022", 6)
        try:
            engine, updates = await turn(ws)
        finally:
            await ws.close()
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert text_of(updates).endswith(FINAL)
    kinds = [e.message.split(":")[0] for e in api.rejected]
    assert kinds == ["input length and `max_tokens` exceed context limit"], kinds
    # Refused at the first request (nothing to compact yet); the retry asks for less.
    assert api.refused_at == [0]
    first, retry = api.requests[0], api.requests[1]
    assert retry["messages"] == first["messages"] and retry["max_tokens"] < first["max_tokens"]
    assert api.input_tokens[0] + retry["max_tokens"] <= 12_000
    assert engine.provider.context_window == 12_000
    api.assert_complete()


async def test_an_empty_answer_to_an_over_long_prompt_is_met_like_a_refusal(
    tmp_path: Path,
) -> None:
    """LM Studio's GGUF runner answers a prompt over its window with a 200 and an empty
    message (lmstudio-ai/lmstudio-bug-tracker#2339). Mid tool loop, that is not the turn's
    end: the user is told, the context compacted, and the turn finishes."""
    with FakeOpenAIServer(
        reads(8, per_batch=3), context_window=12_000, served_model="qwen", announce_window=False
    ) as server:
        server.empty_on_overflow = True
        server.summary_reply = SUMMARY
        ws = workspace(tmp_path, f"openai:qwen@{server.base_url}", 24)
        try:
            engine, updates = await turn(ws)
        finally:
            await ws.close()
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert text_of(updates).endswith(FINAL)
    assert server.rejected and all(e.status == 200 for e in server.rejected)
    empty = [u for u in updates if isinstance(u, Notice) and "no content at all" in u.message]
    assert len(empty) == len(server.rejected) and empty[0].level == "warning"
    assert server.errors == [] and server.remaining == 0


async def test_a_message_too_long_for_the_window_is_named_with_the_servers_own_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's own message is what cannot fit: the stop says so and suggests a file; the
    window's advice is the server's (Anthropic: none to give; llama.cpp: ``--ctx-size``)."""
    message = "Summarise this log:\n" + "error at line 12 of the parser\n" * 3_000
    with FakeAnthropicServer([[{"type": "text", "text": FINAL}]], context_window=16_000) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        ws = workspace(tmp_path, "anthropic:claude-sonnet-4-6", 0)
        try:
            engine = ws.new_session(DiskEditor(), BYPASS).engine
            _ = [u async for u in engine.submit(message)]
        finally:
            await ws.close()
    assert engine.last_result is not None
    stop = engine.last_result.terminal
    assert stop.reason == "prompt_too_long", stop
    assert "for a window of 16000 tokens" in stop.message
    assert "the system prompt and tools take about" in stop.message
    assert "Your message alone takes about" in stop.message and "as a file" in stop.message
    assert "fixed by its provider" in stop.message and "OLLAMA" not in stop.message
    with FakeOpenAIServer(reads(1), context_window=2_048, flavor="llamacpp") as server:
        ws = workspace(tmp_path, f"openai:qwen@{server.base_url}", 1)
        try:
            engine, _ = await turn(ws)
        finally:
            await ws.close()
    assert engine.last_result is not None
    stop = engine.last_result.terminal
    assert stop.reason == "prompt_too_long", stop
    assert "A larger window: llama.cpp's -c/--ctx-size" in stop.message
    assert "Your message" not in stop.message and "Fewer tools" in stop.message


async def test_a_window_an_earlier_session_learned_is_tried_again_once(tmp_path: Path) -> None:
    """A server that reports no window refused at 4096, then restarted on the same URL: the
    next session whose context does not fit the learned window sends one request above it.
    Taken, the window is forgotten; refused again, the stop says when it was learned."""
    (tmp_path / "ws").mkdir()
    learned = tmp_path / "data" / "windows.json"

    ports: list[int] = []

    async def session(window: int, port: int = 0) -> tuple[QueryEngine, FakeOpenAIServer]:
        reply = [[{"type": "text", "text": FINAL}]]
        with FakeOpenAIServer(
            reply, context_window=window, served_model="local", announce_window=False, port=port
        ) as server:
            ports.append(server.port)
            ws = workspace(tmp_path, f"openai:local@{server.base_url}", 0)
            try:
                engine = ws.new_session(DiskEditor(), BYPASS).engine
                _ = [u async for u in engine.submit("hi")]
            finally:
                await ws.close()
        return engine, server

    engine, _ = await session(4_096)
    assert engine.last_result is not None
    stop = engine.last_result.terminal
    assert stop.reason == "prompt_too_long", stop
    assert "The window of 4096 tokens was learned by this session on " in stop.message
    assert "maximum context length is 4096" in stop.message and str(learned) in stop.message
    port = ports[0]
    engine, again = await session(4_096, port)  # the same server: one refusal, then the stop
    assert engine.last_result is not None and len(again.rejected) == 1
    assert "learned by this session" in engine.last_result.terminal.message
    engine, restarted = await session(32_768, port)
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    assert len(restarted.requests) == 1 and restarted.rejected == []
    assert engine.provider.context_window == 32_768
    assert "local" not in learned.read_text()  # forgotten for the next sessions
