"""Fixtures for the built-in tools: a tmp workspace, a real DiskEditor and TaskRegistry."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.errors import ToolError
from tether.protocol.updates import SessionUpdate
from tether.tasks.registry import TaskRegistry
from tether.tools.base import Tool, ToolResult, error_result
from tether.tools.context import SessionRunState, ToolConfig, ToolContext

Run = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Path(os.path.realpath(ws))


@pytest.fixture
def updates() -> list[SessionUpdate]:
    return []


@pytest.fixture
async def tasks(tmp_path: Path) -> AsyncIterator[TaskRegistry]:
    registry = TaskRegistry(tmp_path / "tasks")
    yield registry
    await registry.shutdown()


@pytest.fixture
def ctx(workspace: Path, tasks: TaskRegistry, updates: list[SessionUpdate]) -> ToolContext:
    return ToolContext(
        session_id="test-session",
        tool_use_id="toolu_test",
        cwd=workspace,
        editor=DiskEditor(),
        state=SessionRunState(),
        config=ToolConfig(),
        tasks=tasks,
        emit=updates.append,
    )


@pytest.fixture
def run(ctx: ToolContext) -> Run:
    """Parse raw model input and call the tool as the pipeline would (ToolError -> is_error)."""

    async def run(
        tool: Tool[Any], raw: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        parsed = tool.parse(raw)
        assert not isinstance(parsed, str), parsed
        try:
            return await tool.call(parsed, context or ctx)
        except ToolError as e:
            return error_result(str(e))

    return run
