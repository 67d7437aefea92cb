"""Connections to real MCP servers (the SDK test server in tests/support): start failures
reported, crashes restarted with backoff, streamable HTTP, clean shutdown."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from tether.mcp import Backoff, McpManager, McpOptions, parse_server
from tether.mcp.config import McpConfig
from tether.mcp.connection import McpUnavailable

SERVER = Path(__file__).resolve().parents[2] / "support" / "mcp_server.py"


def options(tmp_path: Path, **kw: Any) -> McpOptions:
    kw.setdefault("backoff", Backoff(initial=0.05))
    return McpOptions(log_dir=tmp_path / "logs", connect_timeout=kw.pop("timeout", 20), **kw)


def stdio(name: str, *args: str) -> Any:
    return parse_server(name, {"command": sys.executable, "args": list(args)})


async def until(check: Callable[[], bool], timeout: float = 15) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


def text(result: Any) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


async def test_start_failures_are_reported_and_do_not_stop_the_others(tmp_path: Path) -> None:
    config = McpConfig(
        [
            stdio("good", str(SERVER)),
            parse_server("missing", {"command": str(tmp_path / "no-such-server")}),
            stdio("exits", "-c", "import sys; sys.stderr.write('no token set\\n'); sys.exit(2)"),
        ],
        problems={"broken": "settings: command: Field required"},
    )
    # Nothing here fails by the connect timeout (the failures are an exit and a missing
    # command), so a loaded machine that starts the good server slowly changes nothing.
    manager = McpManager(tmp_path, config, options(tmp_path))
    manager.start()
    await manager.wait_ready(timeout=30)
    states = {s.name: s for s in manager.statuses()}
    assert states["good"].state == "connected" and states["good"].tools == 157
    assert states["missing"].state == "failed"
    assert "command not found" in (states["missing"].error or "")
    assert states["exits"].state == "failed" and "no token set" in (states["exits"].error or "")
    assert states["broken"].state == "failed"
    with pytest.raises(McpUnavailable, match="missing is failed: command not found"):
        await manager.connections["missing"].call_tool("x", {})
    assert text(await manager.connections["good"].call_tool("echo", {"text": "hi"})) == "hi"
    await manager.close()
    assert manager.statuses()[0].state == "stopped"
    assert manager.statuses()[1].state == "failed"


async def test_a_server_that_never_answers_fails_at_the_connect_timeout(tmp_path: Path) -> None:
    silent = McpConfig([stdio("silent", "-c", "import sys; sys.stdin.read()")])
    manager = McpManager(tmp_path, silent, options(tmp_path, timeout=0.5))
    manager.start()
    await manager.wait_ready(timeout=30)
    (state,) = manager.statuses()
    assert state.state == "failed" and state.error == "did not connect within 0.5s"
    await manager.close()


async def test_a_crash_while_idle_restarts_and_too_many_give_up(tmp_path: Path) -> None:
    manager = McpManager(
        tmp_path,
        [stdio("t", str(SERVER))],
        options(tmp_path, backoff=Backoff(0.05, max_restarts=1)),
    )
    manager.start()
    await manager.wait_ready(timeout=20)
    connection = manager.connections["t"]
    first = int(text(await connection.call_tool("pid", {})))
    os.kill(first, signal.SIGKILL)  # nobody is calling: the closed stream is the only sign
    await until(lambda: connection.restarts == 1 and connection.state == "connected")
    second = int(text(await connection.call_tool("pid", {})))
    assert second != first
    os.kill(second, signal.SIGKILL)
    await until(lambda: connection.state == "failed")
    assert "gave up after 1 restarts" in (connection.error or "")
    with pytest.raises(McpUnavailable):
        await connection.call_tool("pid", {})
    await manager.restart("t")  # on demand, e.g. from a /mcp command
    await until(lambda: connection.state == "connected")
    assert connection.restarts == 0
    await manager.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def http_server() -> AsyncIterator[str]:
    spec = importlib.util.spec_from_file_location("tether_test_mcp_server", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    port = free_port()
    config = uvicorn.Config(
        module.build_server().streamable_http_app(), host="127.0.0.1", port=port, log_level="error"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started, timeout=10)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    await asyncio.wait_for(task, timeout=10)


async def test_streamable_http(tmp_path: Path, http_server: str) -> None:
    server = parse_server("web", {"type": "http", "url": http_server, "headers": {"X-A": "1"}})
    manager = McpManager(tmp_path, [server], options(tmp_path))
    seen: list[str] = []
    manager.subscribe(lambda: seen.append(manager.statuses()[0].state))
    manager.start()
    await manager.wait_ready(timeout=10)
    status = manager.statuses()[0]
    assert (status.transport, status.state, status.tools) == ("http", "connected", 157)
    result = await manager.connections["web"].call_tool("structured", {"n": 7})
    assert result.structured_content == {"square": 49}
    assert manager.summary() == "web (157 tools)"
    await manager.close()
    assert seen[:2] == ["connecting", "connected"] and seen[-1] == "stopped"


async def test_update_applies_a_new_configuration(tmp_path: Path) -> None:
    def missing(name: str, command: str) -> Any:
        return parse_server(name, {"command": str(tmp_path / command)})

    manager = McpManager(tmp_path, [missing("a", "x"), missing("b", "y")], options(tmp_path))
    notified: list[int] = []
    manager.subscribe(lambda: notified.append(len(manager.connections)))
    manager.start()
    await manager.wait_ready(timeout=10)
    kept = manager.connections["a"]
    await manager.update(
        McpConfig([missing("a", "x"), missing("b", "changed"), missing("c", "z")], {"d": "bad"})
    )
    await manager.wait_ready(timeout=10)
    assert manager.connections["a"] is kept  # unchanged: not restarted
    assert sorted(s.name for s in manager.statuses()) == ["a", "b", "c", "d"]
    assert "changed" in (manager.connections["b"].error or "")
    await manager.update(McpConfig([]))
    assert manager.statuses() == [] and notified
    await manager.close()
