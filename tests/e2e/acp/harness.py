"""Start ``tether acp`` as a process behind the SDK's client side, and check every message
it sends against the protocol's schema.

The schema is the SDK's generated ``acp.schema`` models (agent-client-protocol 0.12.1,
schema v1.19.0). Those models are lenient on input (a bad optional field is dropped, a bad
list item skipped), so a message counts as valid only if it validates *and* dumps back to
exactly what was sent: anything dropped, defaulted or unknown shows up as a difference.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp.schema as wire
from acp import spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from pydantic import BaseModel, TypeAdapter

from .client import ScriptedClient

MODEL = "anthropic:claude-sonnet-4-6"
_scripts = itertools.count(1)

# What the agent may send, by method: its requests and notifications to the client ...
AGENT_MESSAGES: dict[str, type[BaseModel]] = {
    "session/update": wire.SessionNotification,
    "session/request_permission": wire.RequestPermissionRequest,
    "fs/read_text_file": wire.ReadTextFileRequest,
    "fs/write_text_file": wire.WriteTextFileRequest,
    "terminal/create": wire.CreateTerminalRequest,
    "terminal/output": wire.TerminalOutputRequest,
    "terminal/wait_for_exit": wire.WaitForTerminalExitRequest,
    "terminal/kill": wire.KillTerminalRequest,
    "terminal/release": wire.ReleaseTerminalRequest,
}
# ... and its results, by the method of the client request they answer.
AGENT_RESULTS: dict[str, Any] = {
    "initialize": wire.InitializeResponse,
    "authenticate": wire.AuthenticateResponse,
    "session/new": wire.NewSessionResponse,
    "session/load": wire.LoadSessionResponse,
    "session/resume": wire.ResumeSessionResponse,
    "session/close": wire.CloseSessionResponse,
    "session/list": wire.ListSessionsResponse,
    "session/prompt": wire.PromptResponse,
    "session/set_mode": wire.SetSessionModeResponse,
    "session/set_config_option": wire.SetSessionConfigOptionResponse,
}


def strictly(model: Any, data: Any) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(model)
    parsed = adapter.validate_python(data)
    again = adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
    assert again == data, f"not valid as {model}:\nsent:   {data}\nparsed: {again}"


@dataclass
class Recorder:
    """Every message on the wire; ``check`` validates what the agent sent."""

    sent: dict[Any, str] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.sent[message["id"]] = message["method"]
        else:
            self.received.append(message)

    def check(self) -> int:
        for message in self.received:
            assert message.get("jsonrpc") == "2.0", message
            method = message.get("method")
            if method is not None:
                strictly(AGENT_MESSAGES[method], message.get("params"))
            elif "error" in message:
                strictly(wire.Error, message["error"])
            else:
                # Empty results go out as {} or null; both mean "no fields".
                result = message.get("result") or {}
                strictly(AGENT_RESULTS[self.sent[message["id"]]], result)
        return len(self.received)


@dataclass
class Agent:
    conn: Any
    client: ScriptedClient
    recorder: Recorder
    process: Any
    cwd: Path

    async def new_session(self, **kwargs: Any) -> str:
        response = await self.conn.new_session(cwd=str(self.cwd), mcp_servers=[], **kwargs)
        return response.session_id

    async def prompt(self, session_id: str, *blocks: Any) -> Any:
        content = [
            wire.TextContentBlock(type="text", text=b) if isinstance(b, str) else b for b in blocks
        ]
        return await self.conn.prompt(session_id=session_id, prompt=content)

    async def raw(self, method: str, params: Any) -> Any:
        """A request the typed client would not let us send."""
        return await self.conn._conn.send_request(method, params)


@asynccontextmanager
async def running_agent(
    cwd: Path,
    env: dict[str, str],
    api: Any = None,
    *,
    script: list[Any] | dict[str, Any] | None = None,
    fs: bool = True,
    terminal: bool = True,
    client: ScriptedClient | None = None,
    model: str | None = MODEL,
) -> AsyncIterator[Agent]:
    """The agent on the fake Anthropic API (``api``) or, quicker to start, on a scripted
    model (``script``, same format; an unmet expectation fails the prompt)."""
    client = client or ScriptedClient()
    recorder = Recorder()
    full_env = dict(env)
    tmp = Path(env["TETHER_DATA_DIR"]).parent
    args: tuple[str, ...] = ("--model", model) if model else ()  # None: the settings' model
    if api is not None:
        full_env["ANTHROPIC_BASE_URL"] = api.base_url
    if script is not None:
        path = tmp / f"script-{next(_scripts)}.json"
        path.write_text(json.dumps(script))
        args = ("--model", f"scripted:{path}")
    log_path = tmp / "agent-stderr.log"
    with log_path.open("ab") as stderr:
        async with spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "tether",
            "acp",
            *args,
            env=full_env,
            cwd=cwd,
            transport_kwargs={"stderr": stderr, "limit": 64 * 1024 * 1024},
            observers=[recorder],
        ) as (conn, process):
            caps = wire.ClientCapabilities(
                fs=wire.FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                terminal=terminal,
            )
            info = wire.Implementation(name="pytest", version="0")
            await conn.initialize(protocol_version=1, client_capabilities=caps, client_info=info)
            try:
                yield Agent(conn, client, recorder, process, cwd)
            finally:
                await client.close()
    assert recorder.check() > 0
