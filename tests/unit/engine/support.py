"""Helpers for engine tests: tiny tools built with build_tool, an engine factory."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.core.hooks import Hooks
from tether.editor.disk import DiskEditor
from tether.editor.port import Editor, PermissionAnswer, PermissionRequest
from tether.engine.engine import EngineConfig, QueryEngine
from tether.permissions.policy import PermissionCheck, RuleSet
from tether.providers.base import ModelRequest, StreamEvent
from tether.providers.models import ModelLimits
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry
from tether.tools.base import Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.transcript.writer import TranscriptWriter


class WaitInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    delay: float = 0.05


class Timeline:
    """Records when tool calls start and end."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, float]] = []
        self.running = 0
        self.max_running = 0

    def starts(self) -> list[str]:
        return [n for kind, n, _ in self.events if kind == "start"]

    def time_of(self, kind: str, name: str) -> float:
        return next(t for k, n, t in self.events if k == kind and n == name)


def timed_tool(name: str, timeline: Timeline, *, safe: bool) -> Tool[WaitInput]:
    async def call(data: WaitInput, ctx: ToolContext) -> ToolResult:
        timeline.events.append(("start", data.name, time.monotonic()))
        timeline.running += 1
        timeline.max_running = max(timeline.max_running, timeline.running)
        try:
            await asyncio.sleep(data.delay)
        finally:
            timeline.running -= 1
            timeline.events.append(("end", data.name, time.monotonic()))
        return ToolResult(content=f"done {data.name}")

    async def allow(_data: WaitInput, _ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck("allow")

    return build_tool(
        name=name,
        description=f"test tool {name}",
        input_model=WaitInput,
        call=call,
        is_read_only=lambda _d: safe,
        is_concurrency_safe=lambda _d: safe,
        check_permissions=allow,
    )


class Answers:
    def __init__(self, answer: PermissionAnswer = "allow_once") -> None:
        self.answer = answer
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return self.answer


def make_engine(
    tmp_path: Path,
    script: Any,
    tools: list[Tool[Any]],
    *,
    provider: Any = None,
    answers: Answers | None = None,
    config: EngineConfig | None = None,
    rules: RuleSet | None = None,
    hooks: Hooks | None = None,
    transcript: bool = True,
    model: str = "scripted",
    editor: Editor | None = None,
) -> QueryEngine:
    provider = provider or ScriptedProvider(parse_script(script), model=model)
    writer = None
    if transcript:
        writer = TranscriptWriter(tmp_path / "t.jsonl", "s1")
        writer.open()
    return QueryEngine(
        session_id="s1",
        cwd=tmp_path,
        provider=provider,
        tools=tools,
        editor=editor or DiskEditor(answers or Answers()),
        rules=rules,
        hooks=hooks,
        config=config,
        transcript=writer,
        tasks=TaskRegistry(tmp_path / "tasks"),
    )


class RaisingProvider:
    """A provider whose stream raises the given error."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    name = "raising"
    model = "raising"
    context_window = 200_000
    limits = ModelLimits(200_000, 250, 250, "none")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise self.error
        yield  # pragma: no cover

    async def discover_window(self, *, again: bool = False) -> None:
        return None

    async def aclose(self) -> None:
        return None


def use(tool: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": tool, "input": input}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}
