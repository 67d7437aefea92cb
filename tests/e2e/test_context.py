"""Context engineering through the real daemon and the fake Messages API: the request
bodies (static prefix, cache breakpoints, instructions, memory), manual compaction, and
every step of the recovery ladder triggered by a fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import running_daemon


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def cache_marks(body: dict[str, Any]) -> list[str]:
    marks = [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    marks += [f"system:{i}" for i, b in enumerate(body["system"]) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        marks += [f"message:{i}" for b in content if "cache_control" in b]
    return marks


async def test_static_prefix_and_breakpoints(
    tmp_path: Path, workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    api = fake_api([[tool("Read", file_path="README.md")], say("one"), say("two"), say("three")])
    async with running_daemon([workspace, other], daemon_env, api) as editor:
        first = await editor.new_session()
        await editor.prompt(first, "read the readme")
        await editor.prompt(first, "and again")
        second = await editor.new_session(workspaceFolder=other.as_uri())
        await editor.prompt(second, "hello from another workspace")
    statics = {body["system"][0]["text"] for body in api.requests}
    assert len(statics) == 1, "the static system prefix changed between turns or sessions"
    assert "You are Tether" in statics.pop()
    dynamic = [body["system"][1]["text"] for body in api.requests]
    assert str(workspace) in dynamic[0] and str(other) in dynamic[-1]
    for body in api.requests:
        marks = cache_marks(body)
        last = len(body["messages"]) - 1
        assert marks == [
            f"tool:{body['tools'][-1]['name']}",
            "system:0",
            "system:1",
            f"message:{last}",
        ]
    # Turn N+1 starts with turn N's messages, so the history breakpoint is a cache hit.
    second_turn = api.requests[2]["messages"]
    assert [m["role"] for m in second_turn[:3]] == [
        m["role"] for m in api.requests[1]["messages"][:3]
    ]


async def test_instructions_and_memory_in_the_request(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    (workspace / "CLAUDE.md").write_text("Always run the tests. @docs/rules.md\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "rules.md").write_text("RULE-ONE: no globals. @../CLAUDE.md\n")
    memory = workspace / ".tether" / "memory"
    memory.mkdir(parents=True)
    lines = []
    for i in range(7):
        (memory / f"deploy{i}.md").write_text(f"DEPLOY-FACT-{i}")
        lines.append(f"- [Deploy note {i}](deploy{i}.md) — how we deploy the service to staging")
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n- [Colors](colors.md) — palette\n")
    api = fake_api([say("ok")])
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "How do we deploy to staging?")
    body = api.requests[0]
    system = body["system"][1]["text"]
    assert "Always run the tests" in system and "RULE-ONE" in system and "import cycle" in system
    sent = json.dumps(body["messages"])
    recalled = sent.count("DEPLOY-FACT-")
    assert 1 <= recalled <= 5


async def test_manual_compaction(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            say("First answer, long. " * 50),
            {
                "expect": {"contains": "focus on deployment"},
                "blocks": say("<summary>SHORT</summary>"),
            },
            {"expect": {"contains": "next question"}, "blocks": say("ok")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "first question")
        result = await editor.request(
            "tether/compact", {"sessionId": session, "instructions": "focus on deployment"}
        )
        assert result["tokensAfter"] < result["tokensBefore"]
        update = await editor.wait_for_update(lambda u: u["update"]["kind"] == "compaction")
        assert update["update"]["trigger"] == "manual"
        await editor.prompt(session, "next question")
    sent = json.dumps(api.requests[-1]["messages"])
    assert "SHORT" in sent and "First answer" not in sent
    api.assert_complete()


ACCEPT = {"model": "anthropic:claude-sonnet-4-6", "permissionMode": "bypassPermissions"}


async def test_stream_broken_retries_without_streaming(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    turn = [tool("Bash", command="echo once >> ran.txt")]
    api = fake_api([{"fault": "cut_mid_tool_input", "blocks": turn}, turn, say("done")])
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        result = await editor.prompt(session, "go")
        assert result["stopReason"] == "end_turn"
        notices = [u["message"] for u in editor.updates_of(session, "notice")]
        assert any("stream broke" in n for n in notices)
    assert (workspace / "ran.txt").read_text() == "once\n"  # run exactly once
    assert api.requests[1].get("stream") in (None, False)


async def test_prompt_too_long_compacts_and_retries_once(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            say("earlier answer"),
            {"fault": "prompt_too_long"},
            {
                "expect": {"contains": "about to be replaced by a summary"},
                "blocks": say("<summary>S</summary>"),
            },
            say("answered after compaction"),
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "first")
        result = await editor.prompt(session, "second")
        assert result["stopReason"] == "end_turn"
        compactions = editor.updates_of(session, "compaction")
        assert [c["trigger"] for c in compactions] == ["reactive"]
    api.assert_complete()


async def test_prompt_too_long_twice_stops_cleanly(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            {"fault": "prompt_too_long"},
            {
                "expect": {"contains": "about to be replaced by a summary"},
                "blocks": say("<summary>S</summary>"),
            },
            {"fault": "prompt_too_long"},
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        result = await editor.prompt(session, "huge")
        assert result["stopReason"] == "error" and result["error"]["code"] == "prompt_too_long"


async def test_max_tokens_mid_text_continues(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            {"blocks": say("The first half of the answer"), "stop_reason": "max_tokens"},
            {
                "expect": {"contains": "Continue exactly where you stopped"},
                "blocks": say(" and the rest."),
            },
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        result = await editor.prompt(session, "explain")
        assert result["stopReason"] == "end_turn"
        text = "".join(u["text"] for u in editor.updates_of(session, "agent_message_chunk"))
        assert text == "The first half of the answer and the rest."
    api.assert_complete()
    # claude-sonnet-4-6: the default 32k output limit, then its own 128k after the cut.
    assert [r["max_tokens"] for r in api.requests] == [32_000, 128_000]


async def test_truncated_tool_input_is_never_run(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            {
                "blocks": [tool("Bash", command="echo should-not-run > bad.txt")],
                "stop_reason": "max_tokens",
            },
            {"expect": {"contains": "was cut off"}, "blocks": say("I will resend it.")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        result = await editor.prompt(session, "go")
        assert result["stopReason"] == "end_turn"
    assert not (workspace / "bad.txt").exists()
    api.assert_complete()


async def test_budget_exhausted_stops_with_state_saved(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, tmp_path: Path
) -> None:
    api = fake_api(
        [
            {
                "blocks": [tool("Read", file_path="README.md")],
                "usage": {"input_tokens": 300000, "output_tokens": 10},
            },
        ]
    )
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "settings.json").write_text(json.dumps({"maxBudgetUsd": 0.5}))
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        result = await editor.prompt(session, "go")
        assert result["stopReason"] == "error"
        assert (
            result["error"]["code"] == "budget_exhausted" and "$0.50" in result["error"]["message"]
        )
    transcript = next((tmp_path / "data").rglob(f"{session}.jsonl")).read_text()
    assert '"tool_result"' in transcript  # the tool ran and its result is saved
