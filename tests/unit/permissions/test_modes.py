"""Modes, plan mode's exit, the sandbox-unavailable rule and rule suggestions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.hooks import NoHooks, ToolHookVerdict
from tether.core.messages import ToolUseBlock
from tether.orchestration.pipeline import ToolRuntime, run_tool_use
from tether.permissions.policy import RuleSet
from tether.protocol.updates import ModeChange

from .conftest import MISSING, TOOLS, MakeCtx, decide_on


async def test_default_mode(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    assert (await decide_on(ctx, "Read", file_path="a.py")).behavior == "allow"
    assert (await decide_on(ctx, "Bash", command="ls -la")).behavior == "allow"
    assert (await decide_on(ctx, "Bash", command="make")).behavior == "ask"
    assert (await decide_on(ctx, "Write", file_path="a.py", content="x")).behavior == "ask"


async def test_accept_edits_allows_edits_inside_only(make_ctx: MakeCtx, tmp_path: Path) -> None:
    ctx = make_ctx("acceptEdits")
    assert (await decide_on(ctx, "Write", file_path="a.py", content="x")).behavior == "allow"
    assert (await decide_on(ctx, "Bash", command="make")).behavior == "ask"


async def test_dont_ask_denies_what_is_not_allowed(make_ctx: MakeCtx) -> None:
    ctx = make_ctx("dontAsk")
    rules = RuleSet.from_strings(allow=["Bash(make:*)"])
    assert (await decide_on(ctx, "Bash", rules, command="make test")).behavior == "allow"
    assert (await decide_on(ctx, "Bash", rules, command="npm publish")).behavior == "deny"
    assert (await decide_on(ctx, "Write", file_path="a", content="")).behavior == "deny"


async def test_bypass_allows_but_respects_deny_and_ask_rules(make_ctx: MakeCtx) -> None:
    ctx = make_ctx("bypassPermissions")
    rules = RuleSet.from_strings(ask=["Bash(npm publish:*)"], deny=["Write(/secrets/**)"])
    assert (await decide_on(ctx, "Bash", rules, command="make")).behavior == "allow"
    assert (await decide_on(ctx, "Bash", rules, command="npm publish")).behavior == "ask"
    denied = await decide_on(ctx, "Write", rules, file_path="secrets/k", content="")
    assert denied.behavior == "deny"


async def test_bypass_can_be_disabled_by_settings(make_ctx: MakeCtx) -> None:
    ctx = make_ctx("bypassPermissions")
    ctx.config.bypass_disabled = True
    assert (await decide_on(ctx, "Bash", command="make")).behavior == "ask"


async def test_plan_mode_is_read_only_even_with_allow_rules(make_ctx: MakeCtx) -> None:
    ctx = make_ctx("plan")
    rules = RuleSet.from_strings(allow=["Write", "Bash(make:*)"])
    assert (await decide_on(ctx, "Write", rules, file_path="a", content="")).behavior == "deny"
    assert (await decide_on(ctx, "Bash", rules, command="make")).behavior == "deny"
    assert (await decide_on(ctx, "Read", rules, file_path="a")).behavior == "allow"


async def test_leaving_plan_mode_is_a_question_showing_the_plan(make_ctx: MakeCtx) -> None:
    ctx = make_ctx("plan")
    rules = RuleSet.from_strings(allow=["ExitPlanMode"])
    decision = await decide_on(ctx, "ExitPlanMode", rules, plan="1. add tests\n2. fix bug")
    assert decision.behavior == "ask" and decision.forced
    assert any("2. fix bug" in getattr(c, "text", "") for c in decision.content)


@pytest.mark.parametrize(("answer", "mode"), [("allow_once", "default"), ("reject_once", "plan")])
async def test_exit_plan_mode_answer_sets_the_mode(
    make_ctx: MakeCtx, answer: str, mode: str
) -> None:
    ctx = make_ctx("plan")
    seen: list[object] = []

    async def asker(request: object) -> str:
        seen.append(request)
        return answer

    ctx.editor = type(ctx.editor)(asker)  # type: ignore[arg-type]
    updates: list[object] = []
    ctx.emit = updates.append  # type: ignore[assignment]
    rt = ToolRuntime("s", TOOLS, RuleSet(), NoHooks(), lambda _i: ctx, lambda _k, _r: None)
    await run_tool_use(ToolUseBlock(id="p", name="ExitPlanMode", input={"plan": "do it"}), rt)
    assert ctx.state.mode == mode and len(seen) == 1
    assert (ModeChange(mode="default") in updates) is (mode == "default")


async def test_without_sandbox_every_mutating_command_needs_approval(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(probe=MISSING)
    rules = RuleSet.from_strings(allow=["Bash(make:*)"])
    asked = await decide_on(ctx, "Bash", rules, command="make")
    assert asked.behavior == "ask" and asked.forced and "unconfined" in asked.reason
    assert (await decide_on(ctx, "Bash", rules, command="git status")).behavior == "allow"
    assert (
        await decide_on(make_ctx("dontAsk", MISSING), "Bash", rules, command="make")
    ).behavior == "deny"


async def test_hook_ask_turns_an_allowed_call_into_a_question(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    asked: list[object] = []

    async def asker(request: object) -> str:
        asked.append(request)
        return "reject_once"

    ctx.editor = type(ctx.editor)(asker)  # type: ignore[arg-type]

    class AskHook(NoHooks):
        async def pre_tool_use(self, tool: str, tool_input: dict, tool_use_id: str):
            return ToolHookVerdict(decision="ask", reason="double-check")

    rt = ToolRuntime("s", TOOLS, RuleSet(), AskHook(), lambda _i: ctx, lambda _k, _r: None)
    out = await run_tool_use(ToolUseBlock(id="r", name="Bash", input={"command": "ls"}), rt)
    assert out.failed and len(asked) == 1
