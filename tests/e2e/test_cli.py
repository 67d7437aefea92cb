"""`tether run` against the fake Messages API, as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether.testing.fake_anthropic import FakeAnthropicServer


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


FOUR_TURNS: list[Any] = [
    [
        {"type": "text", "text": "Reading three files."},
        tool("Read", file_path="src/app.py"),
        tool("Read", file_path="README.md"),
        tool("Read", file_path="src/intl.txt"),
    ],
    [tool("Edit", file_path="src/app.py", old_string="Bye, ", new_string="Goodbye, ")],
    [tool("Bash", command="echo all-done")],
    {"expect": {"contains": "all-done"}, "blocks": [{"type": "text", "text": "Finished."}]},
]


def run_cli(
    workspace: Path, env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", "run", *args],
        cwd=workspace,
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_four_turn_script_with_flags(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    with FakeAnthropicServer(FOUR_TURNS) as api:
        env = {**daemon_env, **print_path, "ANTHROPIC_BASE_URL": api.base_url}
        done = run_cli(
            workspace,
            env,
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash(echo:*)",
            "--output-format",
            "tether-json",
            "Tidy up the farewell",
        )
        assert done.returncode == 0, done.stderr
        api.assert_complete()
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["type"] == "system" and events[0]["subtype"] == "init"
    assert events[-1]["type"] == "result" and events[-1]["subtype"] == "success"
    assert events[-1]["num_turns"] == 4
    assert "Goodbye, " in (workspace / "src" / "app.py").read_text()
    updates = [e["update"] for e in events if e["type"] == "update"]
    # The three reads ran concurrently: all three started before the first finished.
    first_done = next(
        i
        for i, u in enumerate(updates)
        if u["kind"] == "tool_call_update" and u.get("status") == "completed"
    )
    started = [
        u
        for u in updates[:first_done]
        if u["kind"] == "tool_call_update" and u.get("status") == "in_progress"
    ]
    assert len(started) == 3
    bash = [u for u in updates if u["kind"] == "tool_call" and u["toolKind"] == "execute"]
    assert bash and bash[0]["rawInput"]["command"] == "echo all-done"


def test_text_output_and_usage_line(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    with FakeAnthropicServer([[{"type": "text", "text": "Plain answer."}]]) as api:
        env = {**daemon_env, **print_path, "ANTHROPIC_BASE_URL": api.base_url}
        done = run_cli(workspace, env, "--verbose", "hello")  # stderr is not a terminal
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Plain answer."
    assert "end_turn" in done.stderr and "$" in done.stderr  # the usage/cost line


def test_json_output_and_resume(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str]
) -> None:
    script = [
        [{"type": "text", "text": "First."}],
        {"expect": {"contains": "second prompt"}, "blocks": [{"type": "text", "text": "Second."}]},
    ]
    with FakeAnthropicServer(script) as api:
        env = {**daemon_env, **print_path, "ANTHROPIC_BASE_URL": api.base_url}
        first = run_cli(workspace, env, "--output-format", "json", "first prompt")
        result = json.loads(first.stdout)
        assert result["result"] == "First." and result["is_error"] is False
        second = run_cli(
            workspace,
            env,
            "--output-format",
            "json",
            "--resume",
            result["session_id"],
            "-",
            stdin="second prompt",
        )
        assert second.returncode == 0, second.stderr
        assert json.loads(second.stdout)["result"] == "Second."
        assert len(api.requests[-1]["messages"]) == 3
        api.assert_complete()
    listed = subprocess.run(
        [sys.executable, "-m", "tether", "sessions", "--cwd", str(workspace)],
        env={**os.environ, **daemon_env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result["session_id"] in listed.stdout and "2 turn(s)" in listed.stdout


def test_denied_without_a_terminal(workspace: Path, daemon_env: dict[str, str]) -> None:
    script = [[tool("Bash", command="touch made.txt")], [{"type": "text", "text": "ok"}]]
    with FakeAnthropicServer(script) as api:
        env = {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url}
        done = run_cli(workspace, env, "--verbose", "go")
    assert done.returncode == 0
    assert not (workspace / "made.txt").exists()
    # Nobody said no: there was no one to ask. The line says so, and how to allow it.
    assert "✗ touch made.txt (denied: no terminal to ask on)" in done.stderr
    assert "rejected by" not in done.stderr and "--allowedTools" in done.stderr


def test_stderr_stays_empty_on_success_when_it_is_not_a_terminal(
    workspace: Path, daemon_env: dict[str, str], print_path: dict[str, str], tmp_path: Path
) -> None:
    """``tether -p "hi" 2>err``: nothing in ``err`` (as ``claude -p``), in-process and through
    the warm daemon, even with a tool call, a denial and an unavailable sandbox; the answer
    on stdout as ever. An error still goes there."""
    script: list[Any] = [
        [tool("Read", file_path="README.md")],
        [tool("Bash", command="touch made.txt")],
        [{"type": "text", "text": "Hello."}],
    ]
    no_bwrap = tmp_path / "bin"  # a PATH without bubblewrap: the sandbox warning is a note
    no_bwrap.mkdir()
    for name in ("bash", "sh", "touch", "git", "rg"):
        found = shutil.which(name)
        if found:
            (no_bwrap / name).symlink_to(found)
    err = tmp_path / "err"
    with FakeAnthropicServer(script) as api:
        env = {**os.environ, **daemon_env, **print_path, "ANTHROPIC_BASE_URL": api.base_url}
        env["PATH"] = f"{no_bwrap}"
        with err.open("w") as stderr:
            done = subprocess.run(
                [sys.executable, "-m", "tether", "-p", "hi"],
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                timeout=60,
            )
        api.assert_complete()
    assert done.returncode == 0, err.read_text()
    assert done.stdout == "Hello.\n"
    assert err.read_text() == ""
    with FakeAnthropicServer([{"fault": "429"}] * 5) as api:  # the first try and 4 retries
        env["ANTHROPIC_BASE_URL"] = api.base_url
        with err.open("w") as stderr:
            failed = subprocess.run(
                [sys.executable, "-m", "tether", "-p", "hi"],
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                timeout=60,
            )
    assert failed.returncode == 1
    assert "[tether] error (model_error)" in err.read_text()


def test_log_lines_stay_off_stderr_in_process(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    """An in-process run (the first call, ``--no-daemon``, CI) logs a skipped rule, a skill
    that does not load and a failing hook to the log file, not to a stderr that is not a
    terminal; with ``--verbose`` each is one ``[tether]`` line, however often it is logged."""
    config = tmp_path / "config" / "tether"
    (config / "skills" / "bad").mkdir(parents=True)
    (config / "skills" / "bad" / "SKILL.md").write_text("---\nname: [x\n---\nbody\n")
    hook = {"type": "command", "command": "echo hook-broke >&2; exit 1"}
    settings = {
        "permissions": {"allow": ["Bash(:*"]},
        "hooks": {"UserPromptSubmit": [{"hooks": [hook]}]},
    }
    (config / "settings.json").write_text(json.dumps(settings))
    script = tmp_path / "hi.json"
    script.write_text(json.dumps([[{"type": "text", "text": "Hello."}]]))
    env = {**daemon_env, "TETHER_RUNTIME_DIR": str(tmp_path / "run")}
    argv = ["--no-daemon", "--model", f"scripted:{script}", "hi"]  # a script is read afresh
    quiet = run_cli(workspace, env, *argv)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "Hello.\n", "")
    log = "".join(path.read_text() for path in (tmp_path / "run").rglob("*.log"))
    assert "Bash(:*" in log and "bad/SKILL.md" in log
    told = run_cli(workspace, env, "--verbose", *argv)
    assert told.returncode == 0, told.stderr
    notes = [line for line in told.stderr.splitlines() if line.startswith("[tether] ")]
    assert len(notes) == len(set(notes)), told.stderr
    assert any("Bash(:*" in line for line in notes), told.stderr
    assert any("skill" in line and "bad/SKILL.md" in line for line in notes), told.stderr
    assert any("hook-broke" in line for line in notes), told.stderr
    assert "WARNING" not in told.stderr and "Traceback" not in told.stderr


def test_bad_model_spec_is_a_clear_error(workspace: Path, daemon_env: dict[str, str]) -> None:
    env = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    env["ANTHROPIC_API_KEY"] = ""
    done = run_cli(workspace, env, "--model", "openai:llama3", "hi")
    assert done.returncode == 2
    assert "needs a base URL" in done.stderr


def test_demo_runs_offline(tmp_path: Path, daemon_env: dict[str, str]) -> None:
    env = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "tether", "demo", "--dir", str(tmp_path / "demo")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ops = (tmp_path / "demo" / "calc-demo" / "calc" / "ops.py").read_text()
    assert "/ len(values)\n" in ops and "unsaved" in ops
    assert "turn ended: end_turn" in done.stdout
    transcripts = list((tmp_path / "data").rglob("*.jsonl"))
    assert len(transcripts) == 1


def test_thinking_flag(workspace: Path, daemon_env: dict[str, str]) -> None:
    """Thinking is on by default (adaptive on this model); ``--thinking off`` turns it off,
    ``--thinking enabled`` asks for a budget with the interleaved-thinking beta."""
    answer = [{"type": "text", "text": "ok"}]
    with FakeAnthropicServer([answer, answer, answer]) as api:
        env = {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url}
        for flags in ([], ["--thinking", "off"], ["--thinking", "enabled"]):
            done = run_cli(workspace, env, "--model", "claude-sonnet-4-6", *flags, "hello")
            assert done.returncode == 0, done.stderr
        api.assert_complete()
    default, off, enabled = api.requests
    assert default["thinking"] == {"type": "adaptive"}
    assert "thinking" not in off
    assert enabled["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert "interleaved-thinking-2025-05-14" in api.request_headers[2]["anthropic-beta"]
