"""ACP: big messages, wrong requests, missing credentials, and a stdout that carries
nothing but protocol messages."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from .acp.harness import running_agent

MIB = 1024 * 1024


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def test_a_one_mib_message_each_way(workspace: Path, daemon_env: dict[str, str]) -> None:
    pasted = ("0123456789abcdef" * (MIB // 16))[:-9] + "THE-END"
    content = "y" * MIB
    script = [
        {
            "blocks": [tool("Write", file_path="big.txt", content=content)],
            "expect": {"contains": "THE-END"},
        },
        say("Wrote it."),
    ]
    # A window big enough that the megabytes need no compaction.
    async with running_agent(
        workspace, daemon_env, script={"turns": script, "context_window": 10**8}
    ) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
        response = await agent.prompt(session, pasted)  # more than 1 MiB in
        assert response.stop_reason == "end_turn"
        assert agent.client.writes == [(str(workspace / "big.txt"), content)]  # 1 MiB out
        write = next(u for u in agent.client.updates_of(session, "tool_call") if u.kind == "edit")
        assert write.content[0].new_text == content
    assert (workspace / "big.txt").read_text() == content


async def test_unknown_methods_and_bad_params_get_errors(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    cases: list[tuple[str, Any, int]] = [
        ("no/such_method", {}, -32601),
        ("_tether/unknown_extension", {}, -32601),
        ("session/prompt", {"sessionId": "x"}, -32602),  # no prompt
        ("session/prompt", {"sessionId": "nope", "prompt": []}, -32602),  # unknown session
        ("session/new", {"cwd": "relative/dir", "mcpServers": []}, -32602),
        ("session/new", {"cwd": str(workspace / "missing"), "mcpServers": []}, -32602),
        ("session/new", {"cwd": str(workspace)}, -32602),  # mcpServers is required
        ("session/new", {"cwd": str(workspace) + "/\u0000x", "mcpServers": []}, -32602),
        ("session/new", {"cwd": str(workspace / ("a" * 300)), "mcpServers": []}, -32602),
        ("session/list", {"cwd": str(workspace) + "\u0000"}, -32602),
        ("session/set_mode", {"sessionId": "nope", "modeId": "plan"}, -32602),
        ("authenticate", {"methodId": "password"}, -32602),
        ("initialize", None, -32602),
    ]
    async with running_agent(workspace, daemon_env) as agent:
        for method, params, code in cases:
            with pytest.raises(RequestError) as error:
                await agent.raw(method, params)
            assert error.value.code == code, (method, params)
        # Unknown notifications are ignored; the agent is still there afterwards.
        await agent.conn._conn.send_notification("no/such_notification", {"x": 1})
        await agent.conn.cancel(session_id="not-a-session")
        assert (await agent.raw("authenticate", {"methodId": "anthropic-api-key"})) == {}
        assert await agent.new_session()


async def test_a_failed_turn_answers_with_an_error(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    async with running_agent(workspace, daemon_env, script=[]) as agent:  # no model turn at all
        session = await agent.new_session()
        for _ in range(2):  # and the session stays usable
            with pytest.raises(RequestError) as error:
                await agent.prompt(session, "hello?")
            assert error.value.code == -32603
            assert "unexpected model call" in str(error.value)
            assert error.value.data == {"reason": "model_error"}


async def test_missing_credentials_ask_for_authentication(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    env = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    async with running_agent(workspace, env) as agent:
        for call in (agent.new_session(), agent.conn.authenticate(method_id="anthropic-api-key")):
            with pytest.raises(RequestError) as error:
                await call
            assert error.value.code == -32000
            assert "ANTHROPIC_API_KEY" in str(error.value)


async def test_stdout_carries_only_protocol_messages(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    """Raw NDJSON: malformed lines are answered, the shell's output stays off stdout."""
    script = tmp_path / "script.json"
    shell = tool("Bash", command="echo to-stdout; echo to-stderr >&2")
    script.write_text(json.dumps([[shell], say("done")]))
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "tether", "acp", "--model", f"scripted:{script}"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**daemon_env, "PATH": "/usr/bin:/bin"},
        cwd=workspace,
    )
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None and stdout is not None
    lines: list[dict[str, Any]] = []

    async def send(text: str) -> None:
        stdin.write(text.encode() + b"\n")
        await stdin.drain()

    async def answer(request_id: int | None) -> dict[str, Any]:
        while True:
            raw = await asyncio.wait_for(stdout.readline(), 10)
            lines.append(json.loads(raw))  # every line must be JSON
            if lines[-1].get("id") == request_id and "method" not in lines[-1]:
                return lines[-1]

    try:
        await send("this is not json")
        assert (await answer(None))["error"]["code"] == -32700
        await send("[1, 2, 3]")
        assert (await answer(None))["error"]["code"] == -32600
        await send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                }
            )
        )
        assert (await answer(1))["result"]["protocolVersion"] == 1
        new = {"cwd": str(workspace), "mcpServers": []}
        await send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new}))
        session = (await answer(2))["result"]["sessionId"]
        mode = {"sessionId": session, "modeId": "bypassPermissions"}
        await send(
            json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode", "params": mode})
        )
        await answer(3)
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "run it"}]}
        await send(
            json.dumps({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": prompt})
        )
        assert (await answer(4))["result"] == {"stopReason": "end_turn"}
    finally:
        stdin.close()
        await asyncio.wait_for(process.wait(), 10)
    rest = await stdout.read()
    assert all(json.loads(line) for line in rest.splitlines())
    results = [
        m["params"]["update"]
        for m in lines
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call_update"
        and m["params"]["update"].get("status") == "completed"
    ]
    assert "to-stdout" in results[0]["content"][0]["content"]["text"]


async def test_a_project_model_that_waits_for_trust_is_named(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    """The project's settings choose a model server, withheld until the folder is trusted:
    session/new says so and how to grant it, not that no model is configured."""
    spec = "openai:qwen2.5-coder@http://127.0.0.1:9/v1"
    (workspace / ".tether").mkdir(exist_ok=True)
    (workspace / ".tether" / "settings.json").write_text(json.dumps({"model": spec}))
    env = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    async with running_agent(workspace, env, model=None) as agent:
        with pytest.raises(RequestError) as error:
            await agent.new_session()
    assert error.value.code == -32000
    assert f"this folder's settings choose the model {spec}" in str(error.value)
    assert "trust" in str(error.value)
