"""Queued input, permissions, transcript durability."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from tether.permissions.policy import RuleSet
from tether.protocol.content import TextContent
from tether.providers.base import ModelRequest, StreamEvent
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tools.base import ToolResult, build_tool
from tether.tools.context import ToolContext

from .support import Answers, Timeline, WaitInput, make_engine, text, timed_tool, use


async def test_prompt_sent_during_a_turn_is_injected_at_the_next_boundary(tmp_path: Path) -> None:
    timeline = Timeline()
    script = [
        [use("Safe", name="a", delay=0.2)],
        {"expect": {"contains": "also check b"}, "blocks": [text("did both")]},
    ]
    engine = make_engine(tmp_path, script, [timed_tool("Safe", timeline, safe=True)])
    stream = engine.start("check a")
    future = None
    kinds: list[str] = []
    async for update in stream:
        kinds.append(update.kind)
        if update.kind == "tool_call_update" and update.status == "in_progress" and future is None:
            future = await engine.enqueue([TextContent(text="also check b")])
    assert future is not None
    result = await asyncio.wait_for(future, 1)
    assert result.terminal.reason == "completed"
    assert kinds.count("user_message") == 2
    assert engine.provider.remaining == 0  # type: ignore[attr-defined]


async def test_rejected_permission_tells_the_model(tmp_path: Path) -> None:
    tools = [timed_tool("Unsafe", Timeline(), safe=False)]
    # Unsafe's check_permissions allows; force a question with an ask rule.
    answers = Answers("reject_once")
    engine = make_engine(
        tmp_path,
        [[use("Unsafe", name="x")], [text("ok")]],
        tools,
        answers=answers,
        rules=RuleSet.from_strings(ask=["Unsafe"]),
    )
    await engine.run("go")
    assert len(answers.asked) == 1
    block = engine.messages[2].tool_results[0]
    assert block.is_error and "declined" in block.text


async def test_allow_always_is_remembered(tmp_path: Path) -> None:
    async def call(_data: WaitInput, _ctx: ToolContext) -> ToolResult:
        return ToolResult(content="ran")

    asking = build_tool(name="Asker", description="asks", input_model=WaitInput, call=call)
    answers = Answers("allow_always")
    script = [[use("Asker", name="x")], [text("ok")], [use("Asker", name="y")], [text("ok")]]
    engine = make_engine(tmp_path, script, [asking], answers=answers)
    await engine.run("first")
    await engine.run("second")
    assert len(answers.asked) == 1
    assert answers.asked[0].always_rule == "Asker"
    assert [str(r) for r in engine.rules.allow] == ["Asker"]
    assert engine.messages[-2].tool_results[0].text == "ran"


async def test_user_message_is_on_disk_before_the_model_is_called(tmp_path: Path) -> None:
    seen: list[str] = []

    class Peeking(ScriptedProvider):
        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            seen.append((tmp_path / "t.jsonl").read_text())
            async for event in super().stream(request):
                yield event

    provider = Peeking(parse_script([[text("hi")]]))
    engine = make_engine(tmp_path, [], [], provider=provider)
    await engine.run("remember the milk")
    assert "remember the milk" in seen[0]
    lines = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    chain = [r for r in lines if r["type"] not in ("meta", "progress")]
    for parent, child in zip(chain, chain[1:], strict=False):
        assert child["parentUuid"] == parent["uuid"]
