"""Permission questions belong to their session: two sessions whose calls have the same tool
id (ids are unique within a conversation only) are asked, withdrawn and answered apart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from .conftest import running_daemon


def bash(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_same", "name": "Bash", "input": {"command": command}}


async def test_same_tool_id_in_two_sessions_are_two_questions(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [[bash("touch one.txt")], [bash("touch two.txt")], [{"type": "text", "text": "done"}]]
    )
    asked: dict[str, asyncio.Future[str | None]] = {}
    both_asked = asyncio.Event()
    withdrawn: dict[str, asyncio.Event] = {}
    files: dict[str, str] = {}

    async def hold(params: dict[str, Any]) -> str | None:
        assert params["toolCall"]["toolCallId"] == "toolu_same"
        # Which command each session was given depends on whose request reached the
        # fake first: the question says it.
        files[params["sessionId"]] = "one.txt" if "one.txt" in json.dumps(params) else "two.txt"
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        asked[params["sessionId"]] = future
        gone = withdrawn.setdefault(params["sessionId"], asyncio.Event())
        future.add_done_callback(lambda f: gone.set() if f.cancelled() else None)
        if len(asked) == 2:
            both_asked.set()
        return await future

    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.asker = hold
        one, two = await editor.new_session(), await editor.new_session()
        turns = [
            asyncio.create_task(editor.prompt(one, "make one")),
            asyncio.create_task(editor.prompt(two, "make two")),
        ]
        await asyncio.wait_for(both_asked.wait(), 30)
        # Stopping session two withdraws its question ($/cancelRequest), not one's.
        await editor.request("tether/cancel", {"sessionId": two})
        assert (await asyncio.wait_for(turns[1], 30))["stopReason"] == "cancelled"
        await asyncio.wait_for(withdrawn[two].wait(), 10)  # two's question was withdrawn
        assert not asked[one].done(), "one's question still waits for the user"
        asked[one].set_result("allow_once")
        assert (await asyncio.wait_for(turns[0], 30))["stopReason"] == "end_turn"
    assert sorted(files.values()) == ["one.txt", "two.txt"], files
    assert (workspace / files[one]).exists()
    assert not (workspace / files[two]).exists()
    api.assert_complete()
