"""``tether -p`` in text mode as a person sees it: run in a pseudo-terminal (colour, the
spinner, the diff in the permission question, thinking with ``--verbose``), and piped
(plain text, the final answer only on stdout)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tether.cli.style import FRAMES
from tether.testing.fake_anthropic import FakeAnthropicServer

TETHER = [sys.executable, "-m", "tether"]
CYAN_MARK = "\x1b[36m⏺\x1b[0m"
GREEN_TICK = "\x1b[32m✓\x1b[0m"


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def in_terminal(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    answers: list[tuple[str, str]] | None = None,
    timeout: float = 90,
) -> tuple[int, str]:
    """Run with stdin, stdout and stderr on one pseudo-terminal; type each answer once its
    cue has appeared. Returns the exit code and everything the terminal showed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env={**os.environ, "TERM": "xterm-256color", **env},
        start_new_session=True,
    )
    os.close(slave)
    pending = list(answers or [])
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if pending and pending[0][0] in shown.decode("utf-8", "replace"):
                os.write(master, pending.pop(0)[1].encode())
            if proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, shown.decode("utf-8", "replace")


SLOW_TOOL_TURN: list[Any] = [
    {"chunk_delay_ms": 60, "blocks": [say("Looking around."), use("Bash", command="echo hi")]},
    {"chunk_delay_ms": 60, "expect": {"contains": "hi"}, "blocks": [say("All done.")]},
]


def test_colour_and_spinner_on_a_terminal(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    with FakeAnthropicServer(SLOW_TOOL_TURN) as api:
        env = {**daemon_env, **print_path, "ANTHROPIC_BASE_URL": api.base_url}
        env.pop("NO_COLOR", None)
        argv = [*TETHER, "-p", "look around", "--allowedTools", "Bash(echo:*)"]
        code, shown = in_terminal(argv, workspace, {**env, "NO_COLOR": ""})
        api.assert_complete()
    assert code == 0, shown
    assert "Looking around." in shown and "All done." in shown
    assert f"{CYAN_MARK} echo hi" in shown
    assert GREEN_TICK in shown
    spinning = [f"{frame} Thinking…" for frame in FRAMES]
    assert any(s in shown for s in spinning), shown
    assert "\x1b[2m" in shown  # the usage line is dimmed


def test_no_color_on_a_terminal(workspace: Path, daemon_env: dict[str, str]) -> None:
    with FakeAnthropicServer(SLOW_TOOL_TURN) as api:
        env = {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url, "NO_COLOR": "1"}
        argv = [*TETHER, "-p", "look around", "--allowedTools", "Bash(echo:*)"]
        code, shown = in_terminal(argv, workspace, env)
        api.assert_complete()
    assert code == 0, shown
    assert "⏺ echo hi" in shown and "All done." in shown
    assert "\x1b[3" not in shown and "\x1b[2m" not in shown and "\x1b[1m" not in shown


def test_plain_output_when_piped(workspace: Path, daemon_env: dict[str, str]) -> None:
    with FakeAnthropicServer(SLOW_TOOL_TURN) as api:
        done = subprocess.run(  # --verbose: the tool lines on a stderr that is no terminal
            [*TETHER, "-p", "look around", "--allowedTools", "Bash(echo:*)", "--verbose"],
            cwd=workspace,
            env={**os.environ, **daemon_env, "ANTHROPIC_BASE_URL": api.base_url},
            capture_output=True,
            text=True,
            timeout=90,
        )
        api.assert_complete()
    assert done.returncode == 0, done.stderr
    # A script gets the answer, nothing else, and no escape sequences anywhere.
    assert done.stdout == "All done.\n"
    assert "\x1b" not in done.stdout + done.stderr
    assert "⏺ echo hi" in done.stderr and "✓ echo hi" in done.stderr
    assert "2 model request(s)" in done.stderr


def test_the_permission_question_shows_the_diff(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    app = workspace / "src" / "app.py"
    script = [
        [use("Read", file_path=str(app))],
        [use("Edit", file_path=str(app), old_string="Bye, ", new_string="Goodbye, ")],
        [say("Changed.")],
    ]
    with FakeAnthropicServer(script) as api:
        env = {**daemon_env, **print_path, "ANTHROPIC_BASE_URL": api.base_url, "NO_COLOR": ""}
        code, shown = in_terminal(
            [*TETHER, "-p", "say goodbye properly"],
            workspace,
            env,
            answers=[("[1] Allow once", "1\n")],
        )
        api.assert_complete()
    assert code == 0, shown
    assert "wants to run" in shown
    assert '\x1b[31m-    return "Bye, " + name\x1b[0m' in shown
    assert '\x1b[32m+    return "Goodbye, " + name\x1b[0m' in shown
    assert "Goodbye, " in app.read_text()


def test_thinking_is_dimmed_with_verbose(workspace: Path, daemon_env: dict[str, str]) -> None:
    script = [
        [{"type": "thinking", "thinking": "The user wants a greeting."}, say("Hello!")],
        [{"type": "thinking", "thinking": "Quietly thinking."}, say("Hello again!")],
    ]
    with FakeAnthropicServer(script) as api:
        env = {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url, "NO_COLOR": ""}
        code, verbose = in_terminal([*TETHER, "-p", "greet me", "--verbose"], workspace, env)
        assert code == 0, verbose
        code, quiet = in_terminal([*TETHER, "-p", "greet me"], workspace, env)
        api.assert_complete()
    assert code == 0, quiet
    thought = verbose[verbose.index("✻") :]
    assert "\x1b[2m" in verbose[verbose.index("✻") - 5 : verbose.index("✻")]
    assert "The user" in thought and "Hello!" in verbose
    assert "Quietly" not in quiet and "Hello again!" in quiet


def test_the_projects_model_waits_for_the_trust_question(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    """A project's settings name a model server (withheld until the folder is trusted): on a
    terminal the trust question comes before the model is chosen, and a yes runs this very
    call on the project's model. Where nobody can be asked, the error says the model waits
    for trust and how to grant it, instead of "no model is configured"."""
    from tether.testing.fake_openai import FakeOpenAIServer

    env = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    env |= {"TETHER_NO_DAEMON": "1", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    untrusted = tmp_path / "other"
    untrusted.mkdir()
    with FakeOpenAIServer([[say("From the local model.")]]) as api:
        spec = f"openai:qwen2.5-coder@{api.base_url}"
        for folder in (workspace, untrusted):
            (folder / ".tether").mkdir(exist_ok=True)
            (folder / ".tether" / "settings.json").write_text(f'{{"model": "{spec}"}}')
        code, shown = in_terminal(
            [*TETHER, "-p", "hi"], workspace, env, answers=[("Trust this workspace?", "y\n")]
        )
        assert code == 0, shown
        assert f"model endpoint {spec}" in shown and "From the local model." in shown
        api.assert_complete()
        nobody = subprocess.run(
            [*TETHER, "-p", "hi"],
            cwd=untrusted,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert nobody.returncode == 2, nobody.stderr
    assert f"this folder's settings choose the model {spec}" in nobody.stderr
    assert "trust" in nobody.stderr and "No model is configured" not in nobody.stderr


def test_through_the_daemon_a_yes_runs_on_the_projects_model(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    """The same question through the warm daemon (it runs the call for the terminal): a yes
    runs this very call on the project's model, and the next call needs no question."""
    from tether.testing.fake_openai import FakeOpenAIServer

    run_dir = {"TETHER_NO_DAEMON": "0", "TETHER_RUNTIME_DIR": str(tmp_path / "run")}
    daemon = [*TETHER, "daemon"]
    started = subprocess.run(
        [*daemon, "start"], env={**os.environ, **daemon_env, **run_dir}, capture_output=True
    )
    assert started.returncode == 0, started.stderr
    env = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    env |= {**run_dir, "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    try:
        with FakeOpenAIServer([[say("From the local model.")], [say("Again.")]]) as api:
            spec = f"openai:qwen2.5-coder@{api.base_url}"
            (workspace / ".tether").mkdir(exist_ok=True)
            (workspace / ".tether" / "settings.json").write_text(f'{{"model": "{spec}"}}')
            code, shown = in_terminal(
                [*TETHER, "-p", "hi"], workspace, env, answers=[("Trust this workspace?", "y\n")]
            )
            assert code == 0, shown
            assert "From the local model." in shown
            assert "running in this process" not in shown  # the daemon ran it
            code, shown = in_terminal([*TETHER, "-p", "hi"], workspace, env)
            assert code == 0 and "Again." in shown and "Trust this" not in shown, shown
            api.assert_complete()
    finally:
        subprocess.run([*daemon, "stop"], env={**os.environ, **daemon_env, **run_dir}, timeout=60)
