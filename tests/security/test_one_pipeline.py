"""The permission pipeline is one wrapper every tool call passes through — built-in tools,
MCP-named tools and any tool registered later alike — and there is no way around it."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import tether
import tether.engine.loop as loop_module
from tether.core.hooks import NoHooks, ToolHookVerdict
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.orchestration import pipeline
from tether.permissions.policy import RuleSet
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry
from tether.tools.base import ToolResult, build_tool
from tether.tools.context import ToolContext

from .conftest import Answers


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: str = ""


def probe_tool(name: str, calls: list[str]) -> Any:
    """A tool that records the call only if the pipeline approved exactly this call."""

    async def call(data: Payload, ctx: ToolContext) -> ToolResult:
        assert pipeline.approved_call.get() == ctx.tool_use_id or ctx.tool_use_id == "x"
        calls.append(f"{name}:{pipeline.approved_call.get()}")
        return ToolResult(content="done")

    return build_tool(name=name, description=f"{name} test tool", input_model=Payload, call=call)


class Recorder(NoHooks):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def pre_tool_use(self, tool: str, tool_input: dict[str, Any], tool_use_id: str):
        self.seen.append(tool)
        return ToolHookVerdict()


def make_engine(
    tmp_path: Path,
    turns: list[Any],
    tools: list[Any],
    *,
    rules: RuleSet,
    answers: Answers,
    hooks: Any,
) -> QueryEngine:
    engine = QueryEngine(
        session_id="one",
        cwd=tmp_path,
        provider=ScriptedProvider(parse_script(turns), model="scripted"),
        tools=tools,
        editor=DiskEditor(answers),
        rules=rules,
        hooks=hooks,
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    # The engine must hand each call to the pipeline with its own context id.
    engine.tool_context = _with_id(engine.tool_context)  # type: ignore[method-assign]
    engine.tool_runtime.make_context = engine.tool_context
    return engine


def _with_id(make: Any) -> Any:
    return lambda tool_use_id: dataclasses.replace(make(tool_use_id), tool_use_id=tool_use_id)


def use(name: str, tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"value": "v"}}


async def test_every_tool_call_goes_through_run_tool_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passed: list[str] = []
    real = pipeline.run_tool_use

    async def spy(block: Any, rt: Any) -> Any:
        passed.append(block.id)
        return await real(block, rt)

    monkeypatch.setattr(loop_module, "run_tool_use", spy)
    calls: list[str] = []
    tools = [
        probe_tool("Builtin", calls),
        probe_tool("mcp__srv__act", calls),
        probe_tool("Late", calls),
    ]
    turns = [
        [use("Builtin", "t1"), use("mcp__srv__act", "t2")],
        [use("Late", "t3"), use("mcp__srv__act", "t4")],
        [{"type": "text", "text": "done"}],
    ]
    engine = make_engine(
        tmp_path, turns, tools, rules=RuleSet(), answers=Answers("allow_once"), hooks=NoHooks()
    )
    await engine.run("go")
    assert passed == ["t1", "t2", "t3", "t4"]
    assert sorted(calls) == ["Builtin:t1", "Late:t3", "mcp__srv__act:t2", "mcp__srv__act:t4"]


async def test_mcp_tools_get_rules_hooks_and_questions_like_any_tool(tmp_path: Path) -> None:
    calls: list[str] = []
    tools = [probe_tool("mcp__srv__read", calls), probe_tool("mcp__other__write", calls)]
    turns = [
        [use("mcp__srv__read", "a"), use("mcp__other__write", "b")],
        [{"type": "text", "text": "done"}],
    ]
    answers = Answers("reject_once")
    hooks = Recorder()
    rules = RuleSet.from_strings(deny=["mcp__srv"])
    engine = make_engine(tmp_path, turns, tools, rules=rules, answers=answers, hooks=hooks)
    await engine.run("go")
    assert calls == []  # one denied by a server rule, the other rejected by the user
    # A bare server rule in deny removes its tools from the model's view entirely.
    offered = [s.name for s in engine.tool_specs()]
    assert "mcp__srv__read" not in offered and "mcp__other__write" in offered
    assert hooks.seen == ["mcp__other__write"]
    assert [r.tool_name for r in answers.asked] == ["mcp__other__write"]


async def test_a_new_tool_asks_by_default(tmp_path: Path) -> None:
    """build_tool's defaults are fail-closed: a tool that says nothing is asked about."""
    calls: list[str] = []
    answers = Answers("reject_once")
    turns = [[use("Fresh", "f")], [{"type": "text", "text": "ok"}]]
    engine = make_engine(
        tmp_path,
        turns,
        [probe_tool("Fresh", calls)],
        rules=RuleSet(),
        answers=answers,
        hooks=NoHooks(),
    )
    await engine.run("go")
    assert calls == [] and len(answers.asked) == 1


def test_a_registered_tool_cannot_be_swapped_for_one_that_skips_the_pipeline() -> None:
    tool = probe_tool("Frozen", [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.call = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.check_permissions = None  # type: ignore[misc]


def test_only_the_pipeline_ever_calls_a_tool() -> None:
    """No module but orchestration/pipeline.py invokes ``<tool>.call(...)``: the engine,
    the loop, the executor and every front door go through ``run_tool_use``."""
    package = Path(tether.__file__).parent
    callers: list[str] = []
    for path in package.rglob("*.py"):
        if "examples" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "call"
            ):
                callers.append(str(path.relative_to(package)))
    assert callers == ["orchestration/pipeline.py"]
    source = (package / "engine" / "loop.py").read_text()
    assert "run_tool_use(use, parts.runtime)" in source


class Redactor(NoHooks):
    """A PostToolUse hook that hides what the tools printed, as a program's hook would."""

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        if tool.startswith("mcp__"):
            blocks = {"content": [{"type": "text", "text": "REDACTED"}]}
            return ToolHookVerdict(updated_mcp_output=blocks)
        # updatedMCPToolOutput means nothing for a built-in tool; updatedToolOutput does.
        return ToolHookVerdict(
            updated_output={"stdout": "REDACTED", "stderr": ""},
            updated_mcp_output={"content": [{"type": "text", "text": "ignored"}]},
        )


async def test_a_result_a_hook_rewrote_is_all_anyone_sees(tmp_path: Path) -> None:
    async def leak(data: Payload, ctx: ToolContext) -> ToolResult:
        return ToolResult(content="SECRET-TOKEN", raw_output={"stdout": "SECRET-TOKEN"})

    tools = [
        build_tool(name=n, description="leaks", input_model=Payload, call=leak)
        for n in ("Leak", "mcp__srv__leak")
    ]
    turns = [[use("Leak", "t1"), use("mcp__srv__leak", "t2")], [{"type": "text", "text": "ok"}]]
    engine = make_engine(
        tmp_path, turns, tools, rules=RuleSet(), answers=Answers("allow_once"), hooks=Redactor()
    )
    updates = [u async for u in engine.submit("go")]
    results = {r.tool_use_id: r.text for m in engine.messages for r in m.tool_results}
    assert results == {"t1": "REDACTED", "t2": "REDACTED"}
    assert "SECRET-TOKEN" not in repr(updates)
