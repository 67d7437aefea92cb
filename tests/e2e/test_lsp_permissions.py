"""Permission questions as editor dialogs: the rich request and the showMessageRequest
fallback, every answer kind, and "always" surviving a daemon restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import running_daemon

BASH_ECHO = {"type": "tool_use", "name": "Bash", "input": {"command": "echo permitted > out.txt"}}


def script() -> list[Any]:
    return [[BASH_ECHO], [{"type": "text", "text": "ok"}]]


def bash_result(editor: Any, session: str) -> dict[str, Any]:
    return next(
        u
        for u in editor.updates_of(session, "tool_call_update")
        if u.get("status") in ("completed", "failed")
    )


@pytest.mark.parametrize(
    ("answer", "runs", "saved"),
    [
        ("allow_once", True, None),
        ("allow_always", True, ("allow", "Bash(echo permitted > out.txt)")),
        ("reject_once", False, None),
        ("reject_always", False, ("deny", "Bash(echo permitted > out.txt)")),
        ("cancel", False, None),
    ],
)
async def test_request_permission_answers(
    workspace: Path,
    daemon_env: dict[str, str],
    fake_api: Any,
    answer: str,
    runs: bool,
    saved: tuple[str, str] | None,
) -> None:
    api = fake_api(script())
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.answers.append(answer)
        session = await editor.new_session()
        await editor.prompt(session, "go")
        (request,) = editor.permission_requests
        assert request["sessionId"] == session
        assert request["toolCall"]["rawInput"]["command"] == "echo permitted > out.txt"
        kinds = [o["kind"] for o in request["options"]]
        assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
        assert (workspace / "out.txt").exists() is runs
        assert bash_result(editor, session)["status"] == ("completed" if runs else "failed")
    local = workspace / ".tether" / "settings.local.json"
    if saved is None:
        assert not local.exists()
    else:
        kind, rule = saved
        assert json.loads(local.read_text())["permissions"][kind] == [rule]


@pytest.mark.parametrize(
    ("answer", "runs"),
    [("allow_once", True), ("allow_always", True), ("reject_once", False), ("cancel", False)],
)
async def test_show_message_request_fallback(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, answer: str, runs: bool
) -> None:
    api = fake_api(script())
    async with running_daemon([workspace], daemon_env, api, permission_request=False) as editor:
        editor.answers.append(answer)  # "cancel" answers null
        session = await editor.new_session()
        await editor.prompt(session, "go")
        assert editor.permission_requests == []
        (question,) = editor.message_requests
        assert "echo permitted > out.txt" in question.message
        assert [a.title for a in question.actions or []] == [
            "Allow once",
            "Always allow Bash(echo permitted > out.txt)",
            "Reject",
            "Always reject Bash(echo permitted > out.txt)",
        ]
        assert (workspace / "out.txt").exists() is runs


async def test_always_persists_across_a_daemon_restart(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(script() + script())
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.answers.append("allow_always")
        session = await editor.new_session()
        await editor.prompt(session, "go")
        assert len(editor.permission_requests) == 1
    (workspace / "out.txt").unlink()
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.default_answer = "reject_once"  # would block it, if it were asked
        session = await editor.new_session()
        await editor.prompt(session, "go again")
        assert editor.permission_requests == []
        assert (workspace / "out.txt").read_text() == "permitted\n"
    api.assert_complete()


async def test_modes_change_what_is_asked(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    edit = {
        "type": "tool_use",
        "name": "Write",
        "input": {"file_path": "notes.md", "content": "hello\n"},
    }
    api = fake_api(
        [[edit], [{"type": "text", "text": "ok"}], [edit], [{"type": "text", "text": "ok"}]]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session(permissionMode="plan")
        await editor.prompt(session, "write notes")
        assert editor.permission_requests == []  # plan mode denies without asking
        assert not (workspace / "notes.md").exists()
        await editor.request("tether/setMode", {"sessionId": session, "mode": "acceptEdits"})
        await editor.prompt(session, "now write them")
        assert editor.permission_requests == []  # acceptEdits allows without asking
        assert (workspace / "notes.md").read_text() == "hello\n"
        assert any(u["kind"] == "mode" for u in editor.updates_of(session))
