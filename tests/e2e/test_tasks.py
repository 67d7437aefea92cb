"""Background tasks through the front doors: listing and stopping them, a finished task
starting a turn in an idle session, and `tether run` waiting for its tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether.testing.fake_anthropic import FakeAnthropicServer

from .conftest import running_daemon

BYPASS = {"model": "anthropic:claude-sonnet-4-6", "permissionMode": "bypassPermissions"}


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def test_list_and_stop_a_task(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [tool("Bash", command="sleep 60", run_in_background=True, description="long sleep")],
            say("started"),
            {"expect": {"contains": "<status>killed</status>"}, "blocks": say("it was stopped")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=BYPASS) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "start a long sleep")
        listed = await editor.request("tether/listTasks", {"sessionId": session})
        (task,) = listed["tasks"]
        assert task["status"] == "running" and task["description"] == "long sleep"
        stopped = await editor.request(
            "tether/stopTask", {"sessionId": session, "taskId": task["taskId"]}
        )
        assert stopped == {"stopped": True}
        # The stop is a notification for the idle session: a turn of its own follows.
        end = await editor.wait_for_update(
            lambda u: (
                u["update"]["kind"] == "turn_end" and u["turnId"] != editor.updates[0]["turnId"]
            )
        )
        assert end["update"]["stopReason"] == "end_turn"
        statuses = [u["status"] for u in editor.updates_of(session, "task")]
        assert statuses == ["running", "killed"]  # one update per change the client can see
    api.assert_complete()


async def test_finished_task_starts_a_new_turn(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [tool("Bash", command="sleep 0.3; echo BG-DONE", run_in_background=True)],
            say("started"),
            {"expect": {"contains": "BG-DONE"}, "blocks": say("the task printed BG-DONE")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=BYPASS) as editor:
        session = await editor.new_session()
        first = await editor.prompt(session, "run it in the background")
        end = await editor.wait_for_update(
            lambda u: u["update"]["kind"] == "turn_end" and u["turnId"] != first["turnId"],
            timeout=15,
        )
        turn = end["turnId"]
        text = "".join(
            u["update"]["text"]
            for u in editor.updates
            if u["turnId"] == turn and u["update"]["kind"] == "agent_message_chunk"
        )
        assert text == "the task printed BG-DONE"
    api.assert_complete()


def test_headless_run_waits_for_background_tasks(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    script = [
        [tool("Bash", command="sleep 0.5; echo LATE-OUTPUT", run_in_background=True)],
        say("Started it."),
        {"expect": {"contains": "LATE-OUTPUT"}, "blocks": say("It finished with LATE-OUTPUT.")},
    ]
    with FakeAnthropicServer(script) as api:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tether",
                "run",
                "--permission-mode",
                "bypassPermissions",
                "--output-format",
                "stream-json",
                "--verbose",  # progress notes on a stderr that is not a terminal
                "start the job",
            ],
            cwd=workspace,
            env={**os.environ, **daemon_env, "ANTHROPIC_BASE_URL": api.base_url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        api.assert_complete()
    results = [json.loads(x) for x in done.stdout.splitlines() if '"type": "result"' in x]
    assert [r["result"] for r in results] == ["Started it.", "It finished with LATE-OUTPUT."]
    assert "waiting for 1 background task" in done.stderr
