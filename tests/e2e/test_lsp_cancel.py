"""Cancelling a turn: tether/cancel and $/cancelRequest, mid-stream and mid-Bash."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from .conftest import running_daemon

LONG_TEXT = [{"type": "text", "text": "slowly " * 60}]
FIRST_DELTA = 4
"""message_start, ping, content_block_start, then the first text delta: the reply is held there,
so the turn is surely mid-stream when the test cancels it (however loaded the machine)."""


def sleeper(marker: str) -> dict[str, Any]:
    # A unique argument finds the process from the host: inside the sandbox's PID
    # namespace, `$!` would be a pid that means nothing out here.
    command = f"sleep {marker} & wait"
    return {"type": "tool_use", "name": "Bash", "input": {"command": command}}


def running(marker: str) -> list[int]:
    """Live (not zombie) processes on the host whose command line is `sleep <marker>`."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline[:2] == [b"sleep", marker.encode()] and state != "Z":
            found.append(int(entry.name))
    return found


async def wait_until(predicate: Any, timeout: float = 10) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


async def test_tether_cancel_mid_stream(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([LONG_TEXT, [{"type": "text", "text": "after"}]])
    api.hold(0, after_events=FIRST_DELTA)
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        prompt = asyncio.create_task(editor.prompt(session, "talk"))
        await editor.wait_for_update(lambda u: u["update"]["kind"] == "agent_message_chunk")
        editor.client.protocol.notify("tether/cancel", {"sessionId": session})
        result = await asyncio.wait_for(prompt, 10)
        assert result["stopReason"] == "cancelled"
        assert editor.updates_of(session)[-1] == {"kind": "turn_end", "stopReason": "cancelled"}
        # The session stays usable.
        again = await editor.prompt(session, "again")
        assert again["stopReason"] == "end_turn"


async def test_cancel_request_mid_stream(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([LONG_TEXT])
    api.hold(0, after_events=FIRST_DELTA)
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        params = {"sessionId": session, "prompt": [{"type": "text", "text": "talk"}]}
        future = editor.client.protocol.send_request("tether/prompt", params, msg_id=4242)
        await editor.wait_for_update(lambda u: u["update"]["kind"] == "agent_message_chunk")
        editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id=4242))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(asyncio.wrap_future(future), 10)
        await editor.wait_for_update(lambda u: u["update"]["kind"] == "turn_end")
        assert editor.updates_of(session, "turn_end") == [
            {"kind": "turn_end", "stopReason": "cancelled"}
        ]


@pytest.mark.parametrize("how", ["tether/cancel", "$/cancelRequest"])
async def test_cancel_mid_bash_kills_the_process(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, how: str
) -> None:
    marker = f"60.{os.getpid()}{len(how)}"
    api = fake_api([[sleeper(marker)]])
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={
            "model": "anthropic:claude-sonnet-4-6",
            "permissionMode": "bypassPermissions",
        },
    ) as editor:
        session = await editor.new_session()
        params = {"sessionId": session, "prompt": [{"type": "text", "text": "sleep"}]}
        future = editor.client.protocol.send_request("tether/prompt", params, msg_id=777)
        await wait_until(lambda: bool(running(marker)))
        if how == "tether/cancel":
            await editor.request("tether/cancel", {"sessionId": session})
            result = await asyncio.wait_for(asyncio.wrap_future(future), 10)
            assert result["stopReason"] == "cancelled"
        else:
            editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id=777))
            with pytest.raises(JsonRpcRequestCancelled):
                await asyncio.wait_for(asyncio.wrap_future(future), 10)
        await wait_until(lambda: not running(marker), timeout=5)
        assert running(marker) == [], "the sleeping child outlived the cancelled turn"
