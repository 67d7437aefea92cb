"""``tether attach``: a terminal follows a session an editor drives in the warm daemon. It
sees the editor's turn as it streams, queues a prompt of its own (whose permission
question comes to it, not to the editor), and its Ctrl+C cancels the editor's turn."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.lsp.testing.editor_client import EditorOptions, FakeEditor

from .conftest import MODEL, make_editor

BASH_ECHO = {"type": "tool_use", "name": "Bash", "input": {"command": "echo attached > out.txt"}}


@pytest.fixture
def env(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {**daemon_env, "TETHER_RUNTIME_DIR": str(tmp_path / "run")}
    yield values
    import subprocess

    subprocess.run(
        [sys.executable, "-m", "tether", "daemon", "stop"],
        env={**os.environ, **values},
        capture_output=True,
        timeout=60,
    )


class Terminal:
    """``tether attach`` in a subprocess, read line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.err = ""
        self.out = ""
        self._readers = [
            asyncio.create_task(self._pump(proc.stderr, "err")),
            asyncio.create_task(self._pump(proc.stdout, "out")),
        ]

    async def _pump(self, stream: asyncio.StreamReader | None, name: str) -> None:
        assert stream is not None
        while chunk := await stream.read(4096):
            setattr(self, name, getattr(self, name) + chunk.decode())

    async def until(self, text: str, where: str = "err", timeout: float = 30) -> None:
        async def wait() -> None:
            while text not in getattr(self, where):
                await asyncio.sleep(0.02)

        try:
            await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"never saw {text!r}:\nout: {self.out}\nerr: {self.err}")

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode())

    async def leave(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = await asyncio.wait_for(self.proc.wait(), 30)
        await asyncio.gather(*self._readers)
        return code


async def test_a_terminal_follows_queues_answers_and_cancels(
    env: dict[str, str], workspace: Path, fake_api: Any
) -> None:
    slow = {"chunk_delay_ms": 150, "blocks": [{"type": "text", "text": "slow " * 80}]}
    api = fake_api(
        [
            [{"type": "text", "text": "Hello from the model."}],
            [BASH_ECHO],
            [{"type": "text", "text": "Ran it for the terminal."}],
            slow,
        ]
    )
    run_env = {**env, "ANTHROPIC_BASE_URL": api.base_url}
    editor: FakeEditor = make_editor(EditorOptions(init_options={"model": MODEL}))
    await editor.start(
        [sys.executable, "-m", "tether", "serve", "--connect"], [workspace], env=run_env
    )
    try:
        session = await editor.new_session()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tether",
            "attach",
            session,
            cwd=workspace,
            env={**os.environ, **run_env},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        terminal = Terminal(proc)
        await terminal.until(f"attached to {session}")

        # 1. The editor's turn streams to the terminal too.
        result = await editor.prompt(session, "say hello")
        assert result["stopReason"] == "end_turn"
        await terminal.until("Hello from the model.", where="out")
        await terminal.until("turn ended (end_turn)")

        # 2. A prompt typed in the terminal runs; its question comes to the terminal.
        terminal.type("run the echo\n")
        await terminal.until("Permission")
        assert editor.permission_requests == []
        terminal.type("1\n")
        await terminal.until("Ran it for the terminal.", where="out")
        assert (workspace / "out.txt").read_text() == "attached\n"
        # The editor follows the terminal's turn as well.
        await editor.wait_for_update(
            lambda u: (
                u["sessionId"] == session
                and len([x for x in editor.updates_of(session) if x["kind"] == "turn_end"]) == 2
            )
        )

        # 3. Ctrl+C in the terminal cancels the turn the editor started.
        running = asyncio.create_task(editor.prompt(session, "talk slowly"))
        await terminal.until("slow", where="out")
        proc.send_signal(signal.SIGINT)
        assert (await asyncio.wait_for(running, 30))["stopReason"] == "cancelled"
        await terminal.until("turn ended (cancelled)")

        assert await terminal.leave() == 0
    finally:
        await editor.stop()
    assert api.requests and len(api.requests) == 4
