"""The daemon under a raw byte-level client: bad framing, bad JSON, bad params, unknown
methods, early requests, and a dying editor. After every error the next request works."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from .conftest import running_daemon


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0

    @classmethod
    async def spawn(cls, env: dict[str, str]) -> RawClient:
        import os

        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tether",
            "serve",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, **env},
        )
        return cls(proc)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def send(self, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def read(self, timeout: float = 10) -> dict[str, Any]:
        assert self.proc.stdout is not None
        stdout = self.proc.stdout

        async def one() -> dict[str, Any]:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    raise EOFError("daemon closed stdout")
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    return json.loads(await stdout.readexactly(length))

        return await asyncio.wait_for(one(), timeout)

    async def response(self, msg_id: Any, timeout: float = 10) -> dict[str, Any]:
        """The response with ``msg_id``, skipping notifications and server requests."""
        while True:
            message = await self.read(timeout)
            if "method" not in message and message.get("id") == msg_id:
                return message


INIT = {"processId": None, "rootUri": None, "capabilities": {}, "workspaceFolders": None}


async def test_bad_input_gets_errors_and_the_daemon_keeps_serving(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    client = await RawClient.spawn(daemon_env)
    try:
        early = client.request("tether/listSessions", {})
        assert (await client.response(early))["error"]["code"] == -32002

        init = client.request("initialize", {**INIT, "rootUri": workspace.as_uri()})
        result = (await client.response(init))["result"]
        assert result["capabilities"]["experimental"]["tether"]["protocolVersion"] == 1
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

        def works() -> int:
            return client.request("tether/listSessions", {})

        # Garbage bytes between messages are skipped.
        client.send_bytes(b"\x00\xffthis is not a header\r\n\r\n")
        ok = works()
        assert (await client.response(ok))["result"] == {"sessions": []}

        # A body that is not JSON: parse error with a null id.
        client.send_bytes(b"Content-Length: 9\r\n\r\n{not json")
        error = await client.response(None)
        assert error["error"]["code"] == -32700
        ok = works()
        assert "result" in await client.response(ok)

        # A bad Content-Length: parse error, then the stream resyncs.
        client.send_bytes(b'Content-Length: banana\r\n\r\n{"jsonrpc":"2.0","id":99,"method":"x"}')
        error = await client.response(None)
        assert error["error"]["code"] == -32700 and "Content-Length" in error["error"]["message"]
        ok = works()
        assert "result" in await client.response(ok)

        # A Content-Length that is too short: parse error, then resync.
        client.send_bytes(b'Content-Length: 10\r\n\r\n{"jsonrpc":"2.0","id":98,"method":"x"}')
        error = await client.response(None)
        assert error["error"]["code"] == -32700
        ok = works()
        assert "result" in await client.response(ok)

        # Not a JSON-RPC object.
        client.send([1, 2, 3])
        assert (await client.response(None))["error"]["code"] == -32600

        # Unknown method.
        unknown = client.request("tether/noSuchThing", {})
        assert (await client.response(unknown))["error"]["code"] == -32601

        # Invalid params name the field.
        bad = client.request("tether/prompt", {"sessionId": 5, "prompt": "hi"})
        error = (await client.response(bad))["error"]
        assert error["code"] == -32602
        assert "sessionId" in error["message"] and "prompt" in error["message"]

        # Invalid params of a standard method still get an answer.
        hover = client.request("textDocument/hover", {"textDocument": 5})
        assert (await client.response(hover))["error"]["code"] in (-32602, -32601)

        ok = works()
        assert "result" in await client.response(ok)

        down = client.request("shutdown", None)
        assert (await client.response(down))["result"] is None
        client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await asyncio.wait_for(client.proc.wait(), 5) == 0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()


async def test_stdin_eof_mid_turn_exits_within_a_second(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([{"chunk_delay_ms": 200, "blocks": [{"type": "text", "text": "slow " * 40}]}])
    client = await RawClient.spawn({**daemon_env, "ANTHROPIC_BASE_URL": api.base_url})
    try:
        init = client.request(
            "initialize",
            {
                **INIT,
                "rootUri": workspace.as_uri(),
                "initializationOptions": {"model": "anthropic:claude-sonnet-4-6"},
            },
        )
        await client.response(init)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        new = client.request("tether/newSession", {})
        session = (await client.response(new))["result"]["sessionId"]
        client.request(
            "tether/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
        )
        while True:  # wait until the turn is streaming
            message = await client.read()
            if message.get("method") == "tether/sessionUpdate":
                if message["params"]["update"]["kind"] == "agent_message_chunk":
                    break
        assert client.proc.stdin is not None
        started = time.monotonic()
        client.proc.stdin.close()
        await asyncio.wait_for(client.proc.wait(), 5)
        assert time.monotonic() - started < 1.0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()


async def test_shutdown_ends_running_turns_and_flushes_the_transcript(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, tmp_path: Path
) -> None:
    api = fake_api([{"chunk_delay_ms": 200, "blocks": [{"type": "text", "text": "slow " * 40}]}])
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        prompt = asyncio.create_task(editor.prompt(session, "long task"))
        await editor.wait_for_update(lambda u: u["update"]["kind"] == "agent_message_chunk")
    result = await asyncio.wait_for(prompt, 5)
    assert result["stopReason"] == "cancelled"
    files = list((tmp_path / "data").rglob(f"{session}.jsonl"))
    assert len(files) == 1
    records = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert any(r["type"] == "user" for r in records)
    assert any(r["type"] == "system" and r.get("subtype") == "turn_end" for r in records)
