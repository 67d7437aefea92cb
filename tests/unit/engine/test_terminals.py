"""Every terminal reason of the loop, and the invariant that history stays well-formed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.core.hooks import NoHooks, StopHookVerdict, ToolHookVerdict
from tether.core.messages import Message
from tether.engine.engine import EngineConfig, QueryEngine
from tether.errors import ModelError, PromptTooLongError
from tether.protocol.updates import TurnEnd
from tether.providers.scripted import ScriptedProvider

from .support import RaisingProvider, Timeline, make_engine, text, timed_tool, use


def assert_well_formed(messages: list[Message]) -> None:
    """Every tool_use is answered by a tool_result in the next user message(s)."""
    pending: set[str] = set()
    for message in messages:
        if message.role == "assistant":
            assert not pending, f"unanswered tool uses: {pending}"
            pending = {u.id for u in message.tool_uses}
        else:
            pending -= {r.tool_use_id for r in message.tool_results}
    assert not pending, f"unanswered tool uses: {pending}"


async def run(engine: QueryEngine, prompt: str = "go") -> list[Any]:
    return [u async for u in engine.submit(prompt)]


def safe_tools() -> list[Any]:
    return [timed_tool("Safe", Timeline(), safe=True)]


async def test_completed(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, [[text("hello")]], [])
    updates = await run(engine)
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed"
    assert isinstance(updates[-1], TurnEnd) and updates[-1].stop_reason == "end_turn"
    assert "".join(u.text for u in updates if u.kind == "agent_message_chunk") == "hello"


async def test_max_turns(tmp_path: Path) -> None:
    script = [[use("Safe", name="a")], [use("Safe", name="b")], [text("never")]]
    engine = make_engine(tmp_path, script, safe_tools(), config=EngineConfig(max_turns=2))
    result = await engine.run("go")
    assert result.terminal.reason == "max_turns"
    assert result.terminal.stop_reason == "max_turn_requests"
    assert result.model_calls == 2
    assert_well_formed(engine.messages)


async def test_prompt_too_long(tmp_path: Path) -> None:
    provider = RaisingProvider(PromptTooLongError("prompt is too long: 300000 tokens"))
    engine = make_engine(tmp_path, [], [], provider=provider)
    updates = await run(engine)
    end = updates[-1]
    assert isinstance(end, TurnEnd) and end.stop_reason == "error"
    assert end.error is not None and end.error.code == "prompt_too_long"


async def test_model_error(tmp_path: Path) -> None:
    provider = RaisingProvider(ModelError("overloaded after 4 retries", status=529))
    engine = make_engine(tmp_path, [], [], provider=provider)
    result = await engine.run("go")
    assert result.terminal.reason == "model_error"
    assert "overloaded" in result.terminal.message
    # The session stays usable: the next turn runs.
    engine.provider = RaisingProvider(ModelError("still down"))
    assert (await engine.run("again")).terminal.reason == "model_error"


async def test_unexpected_script_call_is_a_model_error(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, [[use("Safe", name="a")]], safe_tools())
    result = await engine.run("go")
    assert result.terminal.reason == "model_error"
    assert "unexpected model call #2" in result.terminal.message
    assert_well_formed(engine.messages)


class StopHooks(NoHooks):
    def __init__(self, *, block_times: int = 0, stop: str | None = None) -> None:
        self.block_times = block_times
        self.stop_message = stop
        self.calls = 0

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        self.calls += 1
        if self.stop_message:
            return StopHookVerdict(stop_turn=self.stop_message)
        if self.calls <= self.block_times:
            return StopHookVerdict(block_reason="tests are not run yet")
        return StopHookVerdict()


async def test_hook_stopped_by_stop_hook(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, [[text("done")]], [], hooks=StopHooks(stop="policy says stop"))
    result = await engine.run("go")
    assert result.terminal.reason == "hook_stopped"
    assert result.terminal.stop_reason == "error"
    assert "policy says stop" in result.terminal.message


async def test_stop_hook_block_makes_the_loop_continue(tmp_path: Path) -> None:
    hooks = StopHooks(block_times=1)
    engine = make_engine(tmp_path, [[text("first")], [text("second")]], [], hooks=hooks)
    result = await engine.run("go")
    assert result.terminal.reason == "completed"
    assert result.model_calls == 2
    assert "tests are not run yet" in engine.messages[2].text


class PreToolStop(NoHooks):
    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        return ToolHookVerdict(stop_turn="no tools today")


async def test_hook_stopped_by_pre_tool_use(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, [[use("Safe", name="a")]], safe_tools(), hooks=PreToolStop())
    result = await engine.run("go")
    assert result.terminal.reason == "hook_stopped"
    assert_well_formed(engine.messages)


async def test_budget_exhausted(tmp_path: Path) -> None:
    script = [
        {
            "blocks": [use("Safe", name="a")],
            "usage": {"input_tokens": 400000, "output_tokens": 1000},
        },
        [text("never")],
    ]
    engine = make_engine(
        tmp_path,
        script,
        safe_tools(),
        model="claude-sonnet-4-6",
        config=EngineConfig(max_budget_usd=0.5),
    )
    result = await engine.run("go")
    assert result.terminal.reason == "budget_exhausted"
    assert result.usage.cost_usd is not None and result.usage.cost_usd >= 0.5
    assert_well_formed(engine.messages)


async def test_max_tokens_escalates_once_then_continues_then_stops(tmp_path: Path) -> None:
    cut = {"blocks": [text("part")], "stop_reason": "max_tokens"}
    engine = make_engine(tmp_path, [cut] * 4, [])
    result = await engine.run("go")
    assert result.terminal.reason == "max_tokens"
    assert result.terminal.stop_reason == "max_tokens"
    provider = engine.provider
    assert isinstance(provider, ScriptedProvider)
    limits = provider.limits
    # First the default output limit; after the first cut, the model's maximum, with
    # continuation prompts (three at most).
    sent = [r.max_tokens for r in provider.requests]
    assert sent == [limits.default_output] + [limits.max_output] * 3
    assert limits.max_output > limits.default_output
    assert result.model_calls == 4
    continuations = [m for m in engine.messages if "cut off at the output limit" in m.text]
    assert len(continuations) == 3


async def test_max_tokens_continuation_recovers(tmp_path: Path) -> None:
    engine = make_engine(
        tmp_path, [{"blocks": [text("par")], "stop_reason": "max_tokens"}, [text("t two")]], []
    )
    result = await engine.run("go")
    assert result.terminal.reason == "completed"


async def test_refusal(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, [{"blocks": [text("no")], "stop_reason": "refusal"}], [])
    result = await engine.run("go")
    assert result.terminal.stop_reason == "refusal"


@pytest.mark.parametrize(
    ("raw_input", "needle"),
    [
        ({}, "the required parameter `name` is missing"),
        ({"name": "a", "bogus": 1}, "unexpected parameter `bogus`"),
        ({"name": "a", "delay": "slow"}, "the parameter `delay` is invalid"),
    ],
)
async def test_invalid_tool_input_is_an_error_result(
    tmp_path: Path, raw_input: dict[str, Any], needle: str
) -> None:
    script = [[{"type": "tool_use", "name": "Safe", "input": raw_input}], [text("ok")]]
    engine = make_engine(tmp_path, script, safe_tools())
    result = await engine.run("go")
    assert result.terminal.reason == "completed"
    block = engine.messages[2].tool_results[0]
    assert block.is_error and needle in block.text


async def test_unknown_tool_is_an_error_result(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, [[use("Nope")], [text("ok")]], safe_tools())
    await engine.run("go")
    block = engine.messages[2].tool_results[0]
    assert block.is_error and "No tool named Nope" in block.text
