"""Hook matchers, output parsing and the events the engine does not drive itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.hooks import CommandHooks
from tether.hooks.matchers import matcher_matches
from tether.hooks.outcome import read_outcome
from tether.hooks.runner import HookRun
from tether.settings.model import HookCommand, HookMatcher


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        (None, "Bash", True),
        ("", "Bash", True),
        ("*", "Edit", True),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "WriteFile", False),
        ("Edit", "NotebookEdit", False),
        ("mcp__.*", "mcp__github__search", True),
        ("Notebook.*", "NotebookEdit", True),
        ("Bash(", "Bash", False),
        # Claude Code 2.1's lists: "|" or ",", spaces around names trimmed.
        ("Read | Bash", "Bash", True),
        ("Read,mcp__calc__add", "mcp__calc__add", True),
        ("Read, Bash", "Write", False),
        ("mcp__calc", "mcp__calc__add", False),
        ("mcp__calc__*", "mcp__calc__add", True),
        ("bash", "Bash", False),
    ],
)
def test_matcher_semantics(matcher: str | None, tool: str, expected: bool) -> None:
    assert matcher_matches(matcher, tool) is expected


def run(code: int | None, out: str = "", err: str = "") -> HookRun:
    return HookRun("h", code, out, err)


def test_outcome_contract() -> None:
    assert read_outcome(run(2, "", "nope")).blocked
    assert read_outcome(run(2, '{"decision":"approve"}', "nope")).permission is None
    assert read_outcome(run(1, "", "oops")).failed
    assert read_outcome(run(None)).failed
    assert read_outcome(run(0, "plain")).context is None
    assert read_outcome(run(0, "plain"), plain_stdout_is_context=True).context == "plain"
    full = read_outcome(
        run(
            0,
            '{"continue":false,"stopReason":"halt","hookSpecificOutput":{"permissionDecision":'
            '"ask","updatedInput":{"a":1},"additionalContext":"ctx"}}',
        )
    )
    assert (full.stop, full.permission, full.updated_input, full.context) == (
        "halt",
        "ask",
        {"a": 1},
        "ctx",
    )
    assert read_outcome(run(0, '{"decision":"block","reason":"r"}')).blocked


def hooks(root: Path, event: str, command: str, matcher: str | None = None) -> CommandHooks:
    config = {event: [HookMatcher(matcher=matcher, hooks=[HookCommand(command=command)])]}
    return CommandHooks(root, "s1", config)  # type: ignore[arg-type]


async def test_session_start_context_comes_with_the_first_prompt(tmp_path: Path) -> None:
    h = hooks(tmp_path, "SessionStart", "echo remember the style guide", "startup")
    first = await h.user_prompt_submit("hi")
    second = await h.user_prompt_submit("again")
    assert first.additional_context == "remember the style guide"
    assert second.additional_context is None


async def test_hook_stdin_has_the_common_fields(tmp_path: Path) -> None:
    out = tmp_path / "stdin.json"
    h = hooks(tmp_path, "PreToolUse", f"cat > {out}", "Read")
    await h.pre_tool_use("Read", {"file_path": "a"}, "toolu_1")
    text = out.read_text()
    for field in ("session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"):
        assert f'"{field}"' in text
    assert '"tool_use_id": "toolu_1"' in text


async def test_project_dir_variables_are_set(tmp_path: Path) -> None:
    h = hooks(tmp_path, "UserPromptSubmit", 'echo "$CLAUDE_PROJECT_DIR|$TETHER_PROJECT_DIR"')
    verdict = await h.user_prompt_submit("x")
    assert verdict.additional_context == f"{tmp_path}|{tmp_path}"


async def test_pre_compact_can_block_and_session_end_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ended"
    config = {
        "PreCompact": [
            HookMatcher(matcher="auto", hooks=[HookCommand(command="echo no >&2; exit 2")])
        ],
        "SessionEnd": [HookMatcher(hooks=[HookCommand(command=f"touch {marker}")])],
    }
    h = CommandHooks(tmp_path, "s1", config)  # type: ignore[arg-type]
    assert await h.pre_compact("auto") == "no"
    assert await h.pre_compact("manual") is None
    await h.session_end("other")
    assert marker.exists()


async def test_subagent_stop_block_asks_to_continue(tmp_path: Path) -> None:
    h = hooks(tmp_path, "SubagentStop", 'echo \'{"decision":"block","reason":"more"}\'')
    verdict = await h.subagent_stop(stop_hook_active=False, last_message="done")
    assert verdict.block_reason == "more"


async def test_duplicate_commands_run_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    command = f"echo x >> {log}"
    config = {
        "PostToolUse": [
            HookMatcher(matcher="Read", hooks=[HookCommand(command=command)]),
            HookMatcher(matcher="*", hooks=[HookCommand(command=command)]),
        ]
    }
    h = CommandHooks(tmp_path, "s1", config)  # type: ignore[arg-type]
    await h.post_tool_use("Read", {}, "t", "out", False)
    assert log.read_text() == "x\n"
