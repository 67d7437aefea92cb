"""Settings files are watched: a change applies to the next tool call, without a restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tether.core.messages import ToolUseBlock
from tether.editor.disk import DiskEditor
from tether.orchestration.pipeline import run_tool_use
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.settings.trust import TrustStore
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions

from .conftest import WORKING


async def wait_for(condition, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_changed_rules_apply_to_the_next_tool_call(root: Path, tmp_path: Path) -> None:
    workspace = Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        provider_factory=lambda _m, _r: ScriptedProvider(parse_script([]), model="scripted"),
        user_settings=False,
        trust=TrustStore(tmp_path / "trust.json"),
        sandbox_probe=WORKING,
    )
    engine = workspace.new_session(DiskEditor()).engine
    (root / "a.txt").write_text("a\n")
    read = ToolUseBlock(id="r1", name="Read", input={"file_path": "a.txt"})
    assert not (await run_tool_use(read, engine.tool_runtime)).failed

    # .tether/ does not exist yet: its creation must be noticed too
    (root / ".tether").mkdir()
    (root / ".tether" / "settings.local.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(/a.txt)"]}, "env": {"X": "1"}})
    )
    await wait_for(lambda: workspace.guard.watcher.stale)
    outcome = await run_tool_use(read, engine.tool_runtime)
    assert outcome.failed and "denied by the rule Read(/a.txt)" in outcome.block.text
    assert [str(r) for r in engine.rules.deny] == ["Read(/a.txt)"]
    await workspace.close()


async def test_reload_keeps_command_line_rules(root: Path, tmp_path: Path) -> None:
    workspace = Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        provider_factory=lambda _m, _r: ScriptedProvider(parse_script([]), model="scripted"),
        user_settings=False,
        trust=TrustStore(tmp_path / "trust.json"),
        sandbox_probe=WORKING,
        watch_settings=False,
    )
    engine = workspace.new_session(DiskEditor(), SessionOptions(allow=["Bash(make:*)"])).engine
    (root / ".tether").mkdir()
    (root / ".tether" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Read"]}})
    )
    workspace.reload_settings()
    assert [str(r) for r in engine.rules.allow] == ["Read", "Bash(make:*)"]
    await workspace.close()
