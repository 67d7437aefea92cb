"""Plan approval is its own question: the plan, three choices and feedback; the chosen mode
is on record; rejected calls say who rejected them and keep the model's text out of view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import running_daemon

PLAN = "1. Fix `mean` in calc/ops.py\n2. Run the tests"
EXIT_PLAN = {"type": "tool_use", "name": "ExitPlanMode", "input": {"plan": PLAN}}
WRITE = {"type": "tool_use", "name": "Write", "input": {"file_path": "NOTES.md", "content": "x\n"}}


def final_update(editor: Any, session: str, tool_call_id: str) -> dict[str, Any]:
    return [
        u
        for u in editor.updates_of(session, "tool_call_update")
        if u["toolCallId"] == tool_call_id and u.get("status") in ("completed", "failed")
    ][-1]


async def test_plan_started_with_accept_edits(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [EXIT_PLAN],
            {"blocks": [WRITE], "expect": {"contains": "accepted without asking"}},
            [{"type": "text", "text": "done"}],
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.answers.append("plan_accept_edits")
        session = await editor.new_session(permissionMode="plan")
        result = await editor.prompt(session, "plan then fix")
        assert result["stopReason"] == "end_turn"
        (question,) = editor.permission_requests  # the Write ran without a question
        assert question["kind"] == "plan"
        assert question["plan"] == PLAN
        assert [o["optionId"] for o in question["options"]] == [
            "plan_default",
            "plan_accept_edits",
            "plan_keep",
        ]
        assert [m["mode"] for m in editor.updates_of(session, "mode")] == ["acceptEdits"]
        assert (workspace / "NOTES.md").read_text() == "x\n"
    api.assert_complete()
    # The mode change is on record: a resumed session is not back in plan mode.
    from tether.transcript.resume import resume

    (path,) = Path(daemon_env["TETHER_DATA_DIR"]).rglob(f"{session}.jsonl")
    assert resume(path, session).mode == "acceptEdits"


async def test_plan_kept_with_feedback_stays_visible(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [EXIT_PLAN],
            {
                "blocks": [{"type": "text", "text": "revising"}],
                "expect": {"contains": "also update the README"},
            },
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.answers.append("plan_keep")
        editor.feedback.append("also update the README")
        session = await editor.new_session(permissionMode="plan")
        await editor.prompt(session, "plan")
        call_id = editor.updates_of(session, "tool_call")[0]["toolCallId"]
        final = final_update(editor, session, call_id)
        assert final["status"] == "failed"
        assert final["rejected"] == "user"
        assert final["content"] == [{"type": "text", "text": PLAN}]
        assert editor.updates_of(session, "mode") == []
        # The history of a loaded session shows the same card.
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        replayed = [
            u
            for u in loaded["history"]
            if u["kind"] == "tool_call_update" and u["toolCallId"] == call_id
        ]
        assert replayed[-1]["rejected"] == "user"
        assert replayed[-1]["content"] == [{"type": "text", "text": PLAN}]
    api.assert_complete()


async def test_rejection_is_not_shown_as_the_models_text(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([[WRITE], [{"type": "text", "text": "ok"}]])
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.answers.append("reject_once")
        session = await editor.new_session()
        await editor.prompt(session, "write notes")
        call_id = editor.updates_of(session, "tool_call")[0]["toolCallId"]
        final = final_update(editor, session, call_id)
        assert final["status"] == "failed"
        assert final["rejected"] == "user"
        assert "Do not retry" not in str(final.get("content"))
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        replayed = [u for u in loaded["history"] if u.get("toolCallId") == call_id]
        assert replayed[-1]["rejected"] == "user"
        assert "Do not retry" not in str(replayed[-1].get("content"))
    # The model itself was told.
    assert "Do not retry" in str(api.requests[-1]["messages"][-1])
    assert not (workspace / "NOTES.md").exists()


async def test_rule_denial_says_so(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([[WRITE], [{"type": "text", "text": "ok"}]])
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": "anthropic:claude-sonnet-4-6"},
    ) as editor:
        session = await editor.new_session(permissionMode="dontAsk")
        await editor.prompt(session, "write notes")
        call_id = editor.updates_of(session, "tool_call")[0]["toolCallId"]
        final = final_update(editor, session, call_id)
        assert final["rejected"] == "mode"
        assert editor.permission_requests == []
