"""``tether -p --model ollama:<model>`` as a user runs it, in-process and through the warm
daemon (which must take the caller's ``OLLAMA_HOST``, not its own): every request to the
fake Ollama carries the window the session uses, and a model Ollama does not have says
how to pull it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tether.testing.fake_ollama import FakeOllamaServer

TETHER = [sys.executable, "-m", "tether"]
SCRIPT = [
    [{"type": "tool_use", "name": "Read", "input": {"file_path": "notes.txt"}}],
    [{"type": "text", "text": "The notes say hello."}],
]


def run(workspace: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TETHER, "-p", "What do the notes say?", "--allowedTools", "Read", *argv],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_print_mode_sends_the_window_with_every_request(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    with FakeOllamaServer(SCRIPT, context_window=24_576, served_model="qwen") as server:
        host = server.base_url.removeprefix("http://")  # as users write OLLAMA_HOST
        env = {**os.environ, **daemon_env, **print_path, "OLLAMA_HOST": host}
        done = run(workspace, env, "--model", "ollama:qwen")
        missing = run(workspace, env, "--model", "ollama:llama3")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The notes say hello.\n"
    assert server.num_ctx == [24_576, 24_576], server.num_ctx
    assert server.requests[1]["messages"][-1]["tool_name"] == "Read"
    assert server.truncated == [] and server.errors == [] and server.remaining == 0
    assert missing.returncode != 0
    assert "model 'llama3' not found" in missing.stderr
    assert "ollama pull llama3" in missing.stderr
