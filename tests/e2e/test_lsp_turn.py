"""A full turn through the real daemon: streaming, tool calls, progress, usage."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

import pytest

from .conftest import running_daemon


def read(path: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Read", "input": {"file_path": path}}


async def test_full_turn_streams_text_and_tool_calls(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [{"type": "text", "text": "Let me look at the app first."}, read("src/app.py")],
            {
                "expect": {"contains": "def greet"},
                "blocks": [{"type": "text", "text": "It greets and says goodbye."}],
            },
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        result = await editor.prompt(session, "What does src/app.py do?")
        assert result["stopReason"] == "end_turn"
        # Input counted by the fake's documented token rule, summed over both requests.
        assert result["usage"]["inputTokens"] == sum(api.input_tokens)
        assert result["usage"]["outputTokens"] > 0
        updates = editor.updates_of(session)
        kinds = [u["kind"] for u in updates]
        assert kinds[0] == "user_message" and kinds[-1] == "turn_end"
        text = "".join(u["text"] for u in updates if u["kind"] == "agent_message_chunk")
        assert text == "Let me look at the app first.It greets and says goodbye."
        assert sum(1 for k in kinds if k == "agent_message_chunk") > 2  # really streamed
        call = next(u for u in updates if u["kind"] == "tool_call")
        assert call["title"] == "Read src/app.py" and call["toolKind"] == "read"
        assert call["locations"][0]["uri"] == (workspace / "src" / "app.py").as_uri()
        statuses = [
            u.get("status")
            for u in updates
            if u["kind"] == "tool_call_update" and u["toolCallId"] == call["toolCallId"]
        ]
        assert statuses == ["in_progress", "completed"]
        assert all(u["sessionId"] == session for u in editor.updates)
        turn_ids = {u["turnId"] for u in editor.updates}
        assert turn_ids == {result["turnId"]}
        # $/progress: begin, a report per tool call, end.
        kinds_progress = [p.value["kind"] for p in editor.progress]
        assert kinds_progress[0] == "begin" and kinds_progress[-1] == "end"
        assert "report" in kinds_progress
    api.assert_complete()


async def test_client_token_is_used_for_progress(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([[{"type": "text", "text": "hi"}]])
    async with running_daemon([workspace], daemon_env, api, work_done_progress=False) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "hi", workDoneToken="my-token")
        tokens = {p.token for p in editor.progress}
        assert tokens == {"my-token"}


async def test_unknown_session_and_bad_params(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    async with running_daemon([workspace], daemon_env) as editor:
        from pygls.exceptions import JsonRpcInvalidParams

        try:
            await editor.prompt("no-such-session", "hi")
            raise AssertionError("expected an error")
        except JsonRpcInvalidParams as e:
            assert "unknown sessionId" in str(e)
        try:
            await editor.request("tether/prompt", {"sessionId": "x", "prompt": []})
            raise AssertionError("expected an error")
        except JsonRpcInvalidParams as e:
            assert "prompt" in str(e)
        try:
            await editor.request("tether/setMode", {"sessionId": "x", "mode": "yolo"})
            raise AssertionError("expected an error")
        except JsonRpcInvalidParams as e:
            assert "mode" in str(e)


async def test_initialize_reports_model_and_sandbox(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    import shutil

    from tether.lsp.testing.editor_client import EditorOptions, FakeEditor

    editor = FakeEditor(EditorOptions(init_options={"model": "scripted:/nowhere.json"}))
    result = await editor.start(
        [sys.executable, "-m", "tether", "serve"], [workspace], env=daemon_env
    )
    try:
        facts = (result.capabilities.experimental or {})["tether"]
        assert facts["protocolVersion"] == 1 and "tether/prompt" in facts["methods"]
        assert facts["model"] == "scripted:/nowhere.json"
        assert facts["modelSource"] == "initializationOptions"
        assert facts["modelReason"] is None
        assert facts["sandbox"] == ("bwrap" if shutil.which("bwrap") else None)
    finally:
        await editor.stop()


async def test_initialize_says_what_to_set_when_no_model_is_configured(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    from tether.lsp.testing.editor_client import EditorOptions, FakeEditor

    # Empty, so a key in the environment running the tests does not count either.
    env = {**daemon_env, "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""}
    editor = FakeEditor(EditorOptions(init_options={}))
    result = await editor.start([sys.executable, "-m", "tether", "serve"], [workspace], env=env)
    try:
        facts = (result.capabilities.experimental or {})["tether"]
        assert facts["model"] is None and facts["modelSource"] is None
        assert "ANTHROPIC_API_KEY" in facts["modelReason"]
        assert "initializationOptions" in facts["modelReason"]
    finally:
        await editor.stop()


@pytest.mark.parametrize(("encoding", "start", "end"), [("utf-16", 11, 16), ("utf-8", 11, 18)])
async def test_a_selection_reaches_the_model_as_exactly_its_range(
    workspace: Path,
    daemon_env: dict[str, str],
    fake_api: Any,
    encoding: Literal["utf-8", "utf-16"],
    start: int,
    end: int,
) -> None:
    source = workspace / "src" / "calc.py"
    source.write_text("def naïve(𝒻, x):\n    return 𝒻(x) + 1\n")
    api = fake_api([[{"type": "text", "text": "It calls 𝒻."}]])
    selection = {"start": {"line": 1, "character": start}, "end": {"line": 1, "character": end}}
    async with running_daemon([workspace], daemon_env, api, encoding=encoding) as editor:
        session = await editor.new_session()
        prompt = [
            {"type": "text", "text": "What is this?"},
            {"type": "resource_link", "uri": source.as_uri(), "range": selection},
        ]
        result = await editor.request("tether/prompt", {"sessionId": session, "prompt": prompt})
        assert result["stopReason"] == "end_turn"
    sent = json.dumps(api.requests[0]["messages"][-1], ensure_ascii=False)
    assert "line 2 column 12 to line 2 column 16" in sent
    assert "\\n𝒻(x)\\n</attached-file>" in sent
    assert "return" not in sent and "+ 1" not in sent
    api.assert_complete()
