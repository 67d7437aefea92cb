"""One prompt whose turn makes 40 tool calls of about 2,000 tokens each, against servers
that enforce a window they do not announce (the model id says 1M; the OpenAI-compatible
server reports none). The turn must end with the final answer: the first refusal names
the window, the session takes it, and from then on the context is kept inside it (never two
refusals in a row); the next session with that model at that endpoint starts with it.

Real workspace files, the real engine, the real SDK and HTTP clients against the strict
fakes (which count tokens by their documented rule and answer summary requests).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.protocol.updates import AgentMessageChunk, Compaction
from tether.providers.openai_compat import FALLBACK_WINDOW
from tether.providers.windows import FILE_NAME, credential_id
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer
from tether.testing.sse import FakeModelServer
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions

CALLS = 40
FINAL = "FINAL: all forty parts are read; each one lists its rows."
BYPASS = SessionOptions(mode="bypassPermissions")
WINDOWS = [12_000, 20_000, 35_000]


def part(i: int) -> str:
    """About 7,500 characters: with Read's line numbers, ~2,000 tokens by the fakes' rule."""
    return "".join(
        f"part {i:02d} row {r:02d}: {'the quick brown fox jumps ' * 4}\n" for r in range(60)
    )


def script() -> list[Any]:
    turns: list[Any] = [
        [
            {"type": "text", "text": f"Reading part {i}."},
            {"type": "tool_use", "name": "Read", "input": {"file_path": f"part{i:02d}.txt"}},
        ]
        for i in range(CALLS)
    ]
    return [*turns, [{"type": "text", "text": FINAL}]]


def workspace(tmp_path: Path, model: str) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    for i in range(CALLS):
        (root / f"part{i:02d}.txt").write_text(part(i))
    return Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        overrides={"model": model},
        user_settings=False,
        watch_settings=False,
    )


async def long_turn(ws: Workspace) -> tuple[QueryEngine, list[Any]]:
    engine = ws.new_session(DiskEditor(), BYPASS).engine
    updates = [u async for u in engine.submit("Read all forty parts, then summarise them.")]
    return engine, updates


def check_turn(engine: QueryEngine, updates: list[Any], server: FakeModelServer) -> None:
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    text = "".join(u.text for u in updates if isinstance(u, AgentMessageChunk))
    assert text.endswith(FINAL)
    refused = server.refused_at
    assert all(b - a > 1 for a, b in zip(refused, refused[1:], strict=False)), refused
    assert server.remaining == 0 and server.errors == []
    assert any(isinstance(u, Compaction) for u in updates)


@pytest.mark.parametrize("window", WINDOWS)
async def test_anthropic_unannounced_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    with FakeAnthropicServer(script(), context_window=window) as api:
        api.summary_reply = "The user asked to read forty parts; the ones read so far list rows."
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        ws = workspace(tmp_path, "anthropic:claude-sonnet-4-6")
        try:
            assert ws.make_provider(None).context_window == 1_000_000
            engine, updates = await long_turn(ws)
            check_turn(engine, updates, api)
            # The model's window was 1M: the first refusal taught the real one.
            assert [e.message.split(":")[0] for e in api.rejected][:1] == ["prompt is too long"]
            assert engine.provider.context_window == window
            assert max(api.input_tokens) <= window
            next_engine = ws.new_session(DiskEditor(), BYPASS).engine
            assert next_engine.provider.context_window == window
            assert next_engine.meter.context_window == window
        finally:
            await ws.close()
        stored = json.loads((tmp_path / "data" / FILE_NAME).read_text())["windows"]
        assert stored == {f"{api.base_url} claude-sonnet-4-6 {credential_id('test-key')}": window}


@pytest.mark.parametrize("window", WINDOWS)
async def test_openai_compatible_unannounced_window(tmp_path: Path, window: int) -> None:
    with FakeOpenAIServer(
        script(), context_window=window, served_model="qwen", announce_window=False
    ) as server:
        server.summary_reply = "The user asked to read forty parts; the ones read so far list rows."
        ws = workspace(tmp_path, f"openai:qwen@{server.base_url}")
        try:
            engine, updates = await long_turn(ws)
            check_turn(engine, updates, server)
            # Without a report, the provider assumes FALLBACK_WINDOW; at 20k its thresholds
            # (about 19k) may keep every request inside the real window, never refused.
            learned = window if server.refused_at else FALLBACK_WINDOW
            if window < FALLBACK_WINDOW // 2:
                assert "maximum context length is 12000" in server.rejected[0].message
                assert learned == window
            assert engine.provider.context_window == learned
            assert max(server.prompt_tokens) <= window
            next_engine = ws.new_session(DiskEditor(), BYPASS).engine
            assert next_engine.provider.context_window == learned
        finally:
            await ws.close()
