"""Hooks: a PreToolUse hook can block or rewrite a call, a Stop hook can make the agent
continue (bounded), and no hook can hang a turn."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.hooks import CommandHooks
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.settings.model import HookCommand, HookEvent, HookMatcher
from tether.tasks.registry import TaskRegistry

from .conftest import TOOLS, Answers, MakeHarness, text_of


def hooks_for(
    root: Path, event: HookEvent, command: str, matcher: str | None = None, timeout: float = 10
) -> CommandHooks:
    config = {
        event: [HookMatcher(matcher=matcher, hooks=[HookCommand(command=command, timeout=timeout)])]
    }
    return CommandHooks(root, "sec", config)


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(path)


async def test_pre_tool_use_hook_exit_2_blocks_the_call_with_stderr_as_reason(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    hook = script(tmp_path, "guard.sh", "cat > /dev/null; echo 'no writes today' >&2; exit 2\n")
    h = make_harness(
        mode="bypassPermissions", hooks=hooks_for(workspace, "PreToolUse", hook, "Bash")
    )
    out = await h.call("Bash", command="touch pwned")
    assert out.failed and "no writes today" in text_of(out)
    assert not (workspace / "pwned").exists()


async def test_pre_tool_use_hook_deny_beats_an_allow_rule_and_another_hooks_allow(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    allow = script(
        tmp_path, "a.sh", """echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'\n"""
    )
    deny = script(
        tmp_path,
        "d.sh",
        """echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"policy"}}'\n""",
    )
    config = {
        "PreToolUse": [
            HookMatcher(matcher="Bash|Write", hooks=[HookCommand(command=allow)]),
            HookMatcher(matcher="Ba.*", hooks=[HookCommand(command=deny)]),
        ]
    }
    h = make_harness(allow=("Bash(touch:*)",), hooks=CommandHooks(workspace, "sec", config))
    out = await h.call("Bash", command="touch x")
    assert out.failed and "policy" in text_of(out)
    assert not (workspace / "x").exists()


async def test_pre_tool_use_hook_rewrites_input_and_approval_covers_the_rewrite(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    hook = script(
        tmp_path,
        "rewrite.sh",
        """echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten > out.txt"}}}'\n""",
    )
    h = make_harness(hooks=hooks_for(workspace, "PreToolUse", hook, "Bash"))
    out = await h.call("Bash", command="echo original > out.txt")
    assert not out.failed, text_of(out)
    (request,) = h.answers.asked
    assert request.raw_input == {"command": "echo rewritten > out.txt"}
    assert any("echo rewritten > out.txt" in getattr(c, "text", "") for c in request.content)
    assert (workspace / "out.txt").read_text() == "rewritten\n"


async def test_hook_allow_does_not_override_an_ask_rule(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    hook = script(tmp_path, "ok.sh", """echo '{"decision":"approve"}'\n""")
    h = make_harness(
        ask=("Bash(touch:*)",), answer="reject_once", hooks=hooks_for(workspace, "PreToolUse", hook)
    )
    out = await h.call("Bash", command="touch asked")
    assert out.failed and len(h.answers.asked) == 1


async def test_hook_that_hangs_times_out_and_the_call_goes_on(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    hook = script(tmp_path, "hang.sh", "sleep 60\n")
    h = make_harness(hooks=hooks_for(workspace, "PreToolUse", hook, timeout=0.5))
    started = time.monotonic()
    out = await h.read("src/app.py")
    assert not out.failed and time.monotonic() - started < 5


async def test_hook_leaving_a_child_holding_its_output_does_not_hang(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    hook = script(tmp_path, "bg.sh", "sleep 60 &\necho '{}'\n")
    h = make_harness(hooks=hooks_for(workspace, "PostToolUse", hook, timeout=30))
    started = time.monotonic()
    out = await h.read("src/app.py")
    assert not out.failed and time.monotonic() - started < 5


async def test_hook_that_ignores_a_huge_stdin_does_not_hang(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "big.txt").write_text("x" * 200_000)
    hook = script(tmp_path, "deaf.sh", "exit 0\n")
    h = make_harness(hooks=hooks_for(workspace, "PostToolUse", hook))
    out = await h.read("big.txt")
    assert not out.failed


def _engine(tmp_path: Path, turns: list[Any], hooks: CommandHooks) -> QueryEngine:
    return QueryEngine(
        session_id="sec",
        cwd=tmp_path,
        provider=ScriptedProvider(parse_script(turns), model="scripted"),
        tools=list(TOOLS.values()),
        editor=DiskEditor(Answers()),
        hooks=hooks,
        tasks=TaskRegistry(tmp_path / "engine-tasks"),
    )


def _text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


async def test_stop_hook_block_makes_the_agent_continue_at_most_8_times(tmp_path: Path) -> None:
    hook = script(tmp_path, "never.sh", "cat >/dev/null; echo 'tests are failing' >&2; exit 2\n")
    engine = _engine(
        tmp_path, [_text(f"done {i}") for i in range(9)], hooks_for(tmp_path, "Stop", hook)
    )
    result = await engine.run("fix it")
    assert result.terminal.reason == "completed"
    assert result.model_calls == 9
    reminders = [m.text for m in engine.messages if "tests are failing" in m.text]
    assert len(reminders) == 8


async def test_stop_hook_sees_stop_hook_active_and_can_let_go(tmp_path: Path) -> None:
    hook = script(
        tmp_path,
        "once.sh",
        "if grep -q '\"stop_hook_active\": true'; then exit 0; fi\n"
        """echo '{"decision":"block","reason":"run the tests first"}'\n""",
    )
    engine = _engine(tmp_path, [_text("first"), _text("second")], hooks_for(tmp_path, "Stop", hook))
    result = await engine.run("go")
    assert result.terminal.reason == "completed" and result.model_calls == 2


async def test_user_prompt_submit_hook_exit_2_drops_the_prompt(tmp_path: Path) -> None:
    hook = script(tmp_path, "gate.sh", "echo 'no secrets in prompts' >&2; exit 2\n")
    engine = _engine(tmp_path, [], hooks_for(tmp_path, "UserPromptSubmit", hook))
    result = await engine.run("my password is hunter2")
    assert result.terminal.reason == "hook_stopped"
    assert "no secrets" in (result.terminal.message or "")
    assert engine.messages == []


async def test_post_tool_use_continue_false_ends_the_turn(tmp_path: Path) -> None:
    hook = script(tmp_path, "halt.sh", """echo '{"continue":false,"stopReason":"budget"}'\n""")
    (tmp_path / "a.txt").write_text("a\n")
    turns = [[{"type": "tool_use", "name": "Read", "input": {"file_path": "a.txt"}}]]
    engine = _engine(tmp_path, turns, hooks_for(tmp_path, "PostToolUse", hook, "Read"))
    result = await engine.run("read it")
    assert result.terminal.reason == "hook_stopped" and result.model_calls == 1
