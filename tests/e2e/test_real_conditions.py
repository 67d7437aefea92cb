"""Long sessions against strict fake APIs with small context windows.

Real workspaces, the real engine and transcripts, the real SDKs over HTTP against fakes that
refuse what the real services refuse and enforce a context window by a documented token
rule. Every request must be accepted: the context is kept in the window by compaction (the
fakes answer summary requests themselves; a fixed script cannot know when they come).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.core.messages import ThinkingBlock
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.protocol.updates import AgentThoughtChunk, Compaction
from tether.testing.anthropic_rules import sign
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions

TURNS = 60
BYPASS = SessionOptions(mode="bypassPermissions")
NOTES = "".join(f"Note {i}: the parser keeps line endings as they are.\n" for i in range(40))


def read(path: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Read", "input": {"file_path": path}}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def session_script(turns: int) -> list[Any]:
    script: list[Any] = []
    for i in range(turns):
        script.append([say(f"Reading the notes for question {i}."), read("notes.txt")])
        script.append([say(f"Answer {i}: the notes say line endings are kept. " * 4)])
    return script


def make_workspace(tmp_path: Path, model: str, options: dict[str, Any]) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES)
    overrides = {"model": model, "modelOptions": options}
    return Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        overrides=overrides,
        user_settings=False,
        watch_settings=False,
    )


async def run_session(workspace: Workspace, turns: int) -> tuple[QueryEngine, list[Compaction]]:
    engine = workspace.new_session(DiskEditor(), BYPASS).engine
    compactions: list[Compaction] = []
    for i in range(turns):
        async for update in engine.submit(f"Question {i}: what do the notes say?"):
            if isinstance(update, Compaction):
                compactions.append(update)
        assert engine.last_result is not None
        assert engine.last_result.terminal.reason == "completed", (i, engine.last_result.terminal)
    return engine, compactions


async def test_sixty_turns_in_a_20k_anthropic_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropicServer(session_script(TURNS), context_window=20_000) as api:
        api.summary_reply = "The user asks about notes.txt; each answer quoted it."
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        workspace = make_workspace(
            tmp_path, "anthropic:claude-sonnet-4-6", {"contextWindow": 20_000}
        )
        try:
            engine, compactions = await run_session(workspace, TURNS)
            assert engine.provider.context_window == 20_000
        finally:
            await workspace.close()
        assert api.rejected == []  # every request accepted, none too long
        assert max(api.input_tokens) <= 20_000
        assert api.summaries >= 1 and any(c.strategy == "summary" for c in compactions)
        # Thinking is on by default for this model, and the summaries ask for none.
        loop_requests = [r for r in api.requests if r.get("tools")]
        assert all(r["thinking"] == {"type": "adaptive"} for r in loop_requests)
        api.assert_complete()


async def test_sixty_turns_in_an_8k_vllm_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer(
        session_script(TURNS), context_window=8_192, served_model="qwen", flavor="vllm"
    ) as server:
        server.summary_reply = "The user asks about notes.txt; each answer quoted it."
        # No window setting: the provider reads max_model_len from /v1/models.
        workspace = make_workspace(tmp_path, f"openai:qwen@{server.base_url}", {})
        try:
            engine, compactions = await run_session(workspace, TURNS)
            assert engine.provider.context_window == 8_192
        finally:
            await workspace.close()
        assert server.rejected == []
        assert max(server.prompt_tokens) < 8_192
        assert server.summaries >= 1 and any(c.strategy == "summary" for c in compactions)
        server.assert_complete()


def big_file(n: int) -> str:
    return "".join(f"row {n}-{i}: {'lorem ipsum dolor sit amet ' * 3}\n" for i in range(300))


async def test_prompt_too_long_mid_session_recovers_in_one_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No proactive summary: long replies and big files push the third request over the 20k
    window (the results are cut to the window's budget, the replies cannot be); the API
    refuses it, the summary request is built to fit, and one retry is accepted."""
    notes = "Notes on the plan so far. " * 900
    script = [
        [say(f"First file. {notes}"), read("big1.txt")],
        [say(f"Second file. {notes}"), read("big2.txt")],
        [say(f"Third file. {notes}"), read("big3.txt")],
        [say("All files read; they hold rows.")],
    ]
    with FakeAnthropicServer(script, context_window=20_000) as api:
        api.summary_reply = "The user asked to read three big files; they were read."
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        workspace = make_workspace(
            tmp_path, "anthropic:claude-sonnet-4-6", {"contextWindow": 20_000}
        )
        root = workspace.root
        (root / "big1.txt").write_text(big_file(1))
        (root / "big2.txt").write_text(big_file(2))
        (root / "big3.txt").write_text(big_file(3))
        workspace.guard.reload()
        try:
            engine = workspace.new_session(DiskEditor(), BYPASS).engine
            engine.compactor.settings.auto = False
            updates = [u async for u in engine.submit("Read the three big files")]
        finally:
            await workspace.close()
        assert engine.last_result is not None
        assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
        refused = [e.message for e in api.rejected]
        assert len(refused) == 1 and refused[0].startswith("prompt is too long"), refused
        compactions = [u for u in updates if isinstance(u, Compaction)]
        assert [c.trigger for c in compactions if c.strategy == "summary"] == ["reactive"]
        assert api.summaries >= 1  # in parts when the history alone exceeds the room
        summary_request = next(r for r in api.requests if not r.get("tools"))
        assert "thinking" not in summary_request  # summaries ask for no thinking
        assert max(api.input_tokens) <= 20_000
        api.assert_complete()


async def test_thinking_tool_loop_survives_resume_and_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thinking = {"type": "thinking", "thinking": "The notes file will answer this."}
    script = [
        # Turn 1: a tool loop with thinking; the second request must carry it back unchanged.
        [thinking, say("Reading."), read("notes.txt")],
        [{"type": "thinking", "thinking": "It says endings are kept."}, say("They are kept.")],
        # Turn 2, after a resume: another loop, compacted in the middle.
        [{"type": "redacted_thinking"}, say("Again."), read("notes.txt")],
        [say("Still kept.")],
    ]
    with FakeAnthropicServer(script, context_window=200_000) as api:
        api.summary_reply = "The user asked about notes.txt; it says endings are kept."
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        workspace = make_workspace(tmp_path, "anthropic:claude-sonnet-4-6", {})
        try:
            engine = workspace.new_session(DiskEditor(), BYPASS).engine
            first = [u async for u in engine.submit("What do the notes say?")]
            session_id = engine.session_id
        finally:
            await workspace.close()
        thoughts = "".join(u.text for u in first if isinstance(u, AgentThoughtChunk))
        assert thoughts == "The notes file will answer this.It says endings are kept."
        sent = api.requests[1]["messages"][1]["content"][0]
        assert sent == {
            "type": "thinking",
            "thinking": "The notes file will answer this.",
            "signature": sign("The notes file will answer this."),
        }

        workspace = make_workspace_again(tmp_path, "anthropic:claude-sonnet-4-6")
        try:
            engine = (await workspace.load_session(session_id, DiskEditor())).engine
            blocks = [b for m in engine.messages for b in m.content]
            assert (
                ThinkingBlock(
                    thinking="The notes file will answer this.",
                    signature=sign("The notes file will answer this."),
                )
                in blocks
            )
            # Compact before every request of this turn's loop.
            engine.compactor.settings.auto_threshold = 1
            engine.compactor.settings.warning_threshold = 1
            engine.state.mode = "bypassPermissions"
            second = [u async for u in engine.submit("And now?")]
        finally:
            await workspace.close()
        assert engine.last_result is not None
        assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
        assert any(isinstance(u, Compaction) and u.strategy == "summary" for u in second)
        # The loop's last request came after a compaction and still starts the assistant
        # message with the redacted thinking block the API gave (the fake verifies it).
        last = api.requests[-1]["messages"]
        loop_assistant = [m for m in last if m["role"] == "assistant"][-1]
        assert loop_assistant["content"][0]["type"] == "redacted_thinking"
        assert api.rejected == []
        api.assert_complete()


def make_workspace_again(tmp_path: Path, model: str) -> Workspace:
    return Workspace(
        tmp_path / "ws",
        store=TranscriptStore(tmp_path / "data"),
        overrides={"model": model},
        user_settings=False,
        watch_settings=False,
    )
