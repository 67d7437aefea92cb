"""A tool context for decision tests, with a configurable sandbox."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.permissions.plan_mode import EXIT_PLAN_MODE_TOOL
from tether.permissions.policy import Decision, RuleSet, decide
from tether.protocol.updates import Mode, SessionUpdate
from tether.sandbox import BwrapSandbox, Probe
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState, ToolConfig, ToolContext
from tether.tools.registry import core_tools

TOOLS = {t.name: t for t in [*core_tools(), EXIT_PLAN_MODE_TOOL]}
WORKING = Probe(True, executable="bwrap")
MISSING = Probe(False, "bubblewrap (bwrap) is not installed")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Path(os.path.realpath(ws))


@pytest.fixture
async def tasks(tmp_path: Path) -> AsyncIterator[TaskRegistry]:
    registry = TaskRegistry(tmp_path / "tasks")
    yield registry
    await registry.shutdown()


MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def make_ctx(root: Path, tasks: TaskRegistry) -> MakeCtx:
    def make(mode: Mode = "default", probe: Probe = WORKING) -> ToolContext:
        updates: list[SessionUpdate] = []
        config = ToolConfig(shell_sandbox=BwrapSandbox(root, probe_result=probe))
        return ToolContext(
            session_id="s",
            tool_use_id="t",
            cwd=root,
            editor=DiskEditor(),
            state=SessionRunState(mode=mode),
            config=config,
            tasks=tasks,
            emit=updates.append,
        )

    return make


async def decide_on(
    ctx: ToolContext, tool: str, rules: RuleSet | None = None, **raw: Any
) -> Decision:
    parsed = TOOLS[tool].parse(raw)
    assert not isinstance(parsed, str), parsed
    return await decide(TOOLS[tool], parsed, ctx, rules or RuleSet())
