"""Hooks the engine drives and what they tell the user: PreCompact runs before every
compaction (and exit 2 blocks it); a hook's ``systemMessage`` and a failing hook reach the
user as notices. Real shell commands through ``CommandHooks``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.context.compaction import CompactionBlockedError
from tether.hooks import CommandHooks
from tether.protocol.updates import Notice
from tether.settings.model import HookCommand, HookMatcher

from .support import Timeline, make_engine, text, timed_tool, use

SUMMARY = {
    "expect": {"contains": "about to be replaced by a summary"},
    "blocks": [text("<summary>S</summary>")],
}


def hooks(root: Path, config: dict[str, Any]) -> CommandHooks:
    return CommandHooks(root, "s1", config)  # type: ignore[arg-type]


def matcher(command: str, on: str | None = None) -> list[HookMatcher]:
    return [HookMatcher(matcher=on, hooks=[HookCommand(command=command)])]


async def test_pre_compact_runs_before_a_compaction(tmp_path: Path) -> None:
    seen = tmp_path / "precompact.json"
    h = hooks(tmp_path, {"PreCompact": matcher(f"cat > {seen}")})
    engine = make_engine(tmp_path, [[text("hi")], SUMMARY], [], hooks=h)
    await engine.run("hello")
    await engine.compact("keep the API notes")
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PreCompact"
    assert payload["trigger"] == "manual"
    assert payload["custom_instructions"] == "keep the API notes"
    await engine.close()


async def test_pre_compact_exit_2_blocks_it(tmp_path: Path) -> None:
    h = hooks(tmp_path, {"PreCompact": matcher("echo 'not now' >&2; exit 2", "manual")})
    engine = make_engine(tmp_path, [[text("hi")]], [], hooks=h)
    await engine.run("hello")
    before = list(engine.messages)
    with pytest.raises(CompactionBlockedError, match="not now"):
        await engine.compact()
    assert engine.messages == before  # nothing summarised, nothing lost
    await engine.close()


async def test_system_message_and_failures_reach_the_user(tmp_path: Path) -> None:
    config = {
        "UserPromptSubmit": matcher('echo \'{"systemMessage": "Style guide: PEP 8"}\''),
        "PostToolUse": matcher("echo 'lint crashed' >&2; exit 1"),
    }
    timeline = Timeline()
    engine = make_engine(
        tmp_path,
        [[use("Safe", name="a")], [text("done")]],
        [timed_tool("Safe", timeline, safe=True)],
        hooks=hooks(tmp_path, config),
    )
    updates = [u async for u in engine.submit("go")]
    notices = [(u.level, u.message) for u in updates if isinstance(u, Notice)]
    assert ("info", "UserPromptSubmit says: Style guide: PEP 8") in notices
    failures = [m for level, m in notices if level == "warning" and "PostToolUse" in m]
    assert len(failures) == 1 and "exit code 1" in failures[0] and "lint crashed" in failures[0]
    assert engine.last_result is not None and engine.last_result.terminal.reason == "completed"
    await engine.close()
