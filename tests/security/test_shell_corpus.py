"""The corpus: real command lines of the kind coding agents run, each with what the parser
must find (commands, the paths they read and write), whether the line is read-only, and
what the permission pipeline decides in a workspace with no rules (default mode, and
acceptEdits for the file commands)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.permissions.policy import RuleSet, decide
from tether.permissions.shell import effects, is_read_only_command, parse_script
from tether.protocol.updates import Mode
from tether.sandbox import BwrapSandbox, Probe
from tether.tasks.registry import TaskRegistry
from tether.tools.bash import BASH_TOOL
from tether.tools.context import SessionRunState, ToolConfig, ToolContext

CORPUS = Path(__file__).with_name("shell_corpus.jsonl")
ENTRIES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line
]
IDS = [f"{i:03d}-{e['command'][:40]}" for i, e in enumerate(ENTRIES)]


def test_the_corpus_is_large_and_varied() -> None:
    assert len(ENTRIES) >= 300
    programs = {c[0] for e in ENTRIES for c in e["commands"] or [] if c}
    for needed in ("git", "npm", "pytest", "find", "xargs", "sed", "awk", "jq", "head", "cd"):
        assert needed in programs, needed
    assert sum("<<" in e["command"] for e in ENTRIES) >= 5
    assert sum(e["command"].startswith(("for ", "while ")) for e in ENTRIES) >= 5


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_parser_finds_the_commands_and_paths(entry: dict[str, Any]) -> None:
    command = entry["command"]
    script = parse_script(command)
    if entry["commands"] is None:
        assert script is None, command
    else:
        assert script is not None, command
        assert [list(c.argv) for c in script.commands] == entry["commands"]
        found = [effects(c) for c in script.commands]
        assert [w.text for f in found for w in f.reads] == entry["reads"]
        assert [w.text for f in found for w in (*f.writes, *f.removes)] == entry["writes"]
    assert is_read_only_command(command) is entry["read_only"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    return Path(os.path.realpath(root))


def _context(workspace: Path, mode: Mode) -> ToolContext:
    # A sandbox that reports itself working: the decision, not bubblewrap, is under test.
    sandbox = BwrapSandbox(workspace, probe_result=Probe(True, executable="bwrap"))
    return ToolContext(
        session_id="corpus",
        tool_use_id="t",
        cwd=workspace,
        editor=DiskEditor(),
        state=SessionRunState(mode=mode),
        config=ToolConfig(shell_sandbox=sandbox),
        tasks=TaskRegistry(workspace.parent / "tasks"),
        emit=lambda _u: None,
    )


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
async def test_decision_in_a_workspace_without_rules(
    workspace: Path, entry: dict[str, Any]
) -> None:
    data = BASH_TOOL.input_model(command=entry["command"])
    for mode, key in (("default", "default"), ("acceptEdits", "acceptEdits")):
        if key in entry:
            decision = await decide(BASH_TOOL, data, _context(workspace, mode), RuleSet())
            assert decision.behavior == entry[key], (mode, entry["command"], decision.reason)
