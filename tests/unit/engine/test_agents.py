"""Subagents and background tasks: concurrency, notification order and timing, idle turns,
the recursion guard."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.engine.turns import EngineConfig
from tether.protocol.content import TextContent
from tether.providers.base import Completed, ModelRequest, StreamEvent
from tether.providers.models import ModelLimits
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.session.events import SessionEvents
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState
from tether.tools.registry import core_tools
from tether.transcript.writer import TranscriptWriter


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str, delay_ms: int = 0) -> dict[str, Any]:
    return {"chunk_delay_ms": delay_ms, "blocks": [{"type": "text", "text": text}]}


class Routing:
    """Routes each request to a script by a marker in its first user message, so the
    parent and each subagent play their own scripts concurrently."""

    name = "routing"
    model = "routing"
    context_window = 200_000
    limits = ModelLimits(200_000, 64_000, 32_000, "adaptive")

    def __init__(self, scripts: dict[str, list[Any]]) -> None:
        self.providers = {k: ScriptedProvider(parse_script(v)) for k, v in scripts.items()}
        self.stream_log: list[tuple[str, float, float]] = []

    def _pick(self, request: ModelRequest) -> str:
        first = request.messages[0].text if request.messages else ""
        return next((k for k in self.providers if k != "parent" and k in first), "parent")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        key = self._pick(request)
        started = time.monotonic()
        async for event in self.providers[key].stream(request):
            if isinstance(event, Completed):  # the consumer stops after this event
                self.stream_log.append((key, started, time.monotonic()))
            yield event

    async def aclose(self) -> None:
        return None

    def assert_complete(self) -> None:
        for provider in self.providers.values():
            provider.assert_complete()


def make(
    tmp_path: Path,
    provider: Any,
    events: SessionEvents | None = None,
    config: EngineConfig | None = None,
) -> QueryEngine:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "parent")
    writer.open()
    return QueryEngine(
        session_id="parent",
        cwd=tmp_path,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(),
        state=SessionRunState(mode="bypassPermissions"),
        transcript=writer,
        tasks=TaskRegistry(tmp_path / "tasks"),
        events=events,
        config=config,
    )


def child(marker: str, seconds: float) -> list[Any]:
    return [[tool("Bash", command=f"sleep {seconds}")], say(f"report from {marker}")]


def notification_order(engine: QueryEngine) -> list[str]:
    text = "\n".join(m.text for m in engine.messages if "<task-notification>" in m.text)
    return [
        marker
        for _pos, marker in sorted((text.find(f"report from {m}"), m) for m in "ABC")
        if _pos >= 0
    ]


async def test_three_background_agents_notify_in_completion_order_at_boundaries(
    tmp_path: Path,
) -> None:
    agents = [
        tool("Agent", description=f"task {m}", prompt=f"marker {m}: do it", run_in_background=True)
        for m in "ABC"
    ]
    provider = Routing(
        {
            "parent": [
                agents,
                say("Waiting while they work. " * 12, delay_ms=60),
                say("B and C reported"),
                say("A reported too"),
            ],
            "marker A": child("A", 0.9),
            "marker B": child("B", 0.1),
            "marker C": child("C", 0.45),
        }
    )
    engine = make(tmp_path, provider)
    await engine.run("start three agents")
    started = [
        m for m in engine.messages if "Agent started in the background" in m.model_dump_json()
    ]
    assert started, "the agents were not started in the background"
    # A finishes after the parent's turn ended: its notification starts a turn of its own.
    await asyncio.wait_for(_until(lambda: bool(engine.notifications)), 5)
    assert engine.notifications
    assert (await engine.run(None)).terminal.reason == "completed"
    provider.assert_complete()
    assert notification_order(engine) == ["B", "C", "A"]
    # The three agents ran at the same time: each one's run (its first request to its
    # last answer, around its sleep) overlaps each other's. One after another, in any
    # order, no two would overlap. Ordering only, no wall-clock bound, so load cannot fail it.
    spans = [(k, s, e) for k, s, e in provider.stream_log if k.startswith("marker")]
    assert len(spans) == 6
    runs = {
        m: (
            min(s for k, s, _e in spans if k == f"marker {m}"),
            max(e for k, _s, e in spans if k == f"marker {m}"),
        )
        for m in "ABC"
    }
    for x in "ABC":
        for y in "ABC":
            assert runs[x][0] < runs[y][1], f"agent {x} started after agent {y} had finished"
    # Never mid-stream: notifications entered the history only at turn boundaries (after
    # the slow second reply), not inside it.
    second = next(
        i for i, m in enumerate(engine.messages) if m.role == "assistant" and "Waiting" in m.text
    )
    assert all("<task-notification>" not in m.text for m in engine.messages[: second + 1])


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.01)


async def test_idle_session_starts_a_turn_for_a_notification(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        parse_script(
            [
                [tool("Bash", command="sleep 0.2; echo finished", run_in_background=True)],
                say("started it"),
                {
                    "expect": {"contains": "<task-notification>"},
                    "blocks": [{"type": "text", "text": "it finished"}],
                },
            ]
        )
    )
    events = SessionEvents()
    engine = make(tmp_path, provider, events=events)
    woke = events.wake_requested
    await engine.run("start it")
    assert not engine.busy
    await asyncio.wait_for(woke.wait(), 5)
    result = await engine.run(None)
    assert result.terminal.reason == "completed"
    provider.assert_complete()


async def test_user_message_and_notification_together_are_both_injected(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        parse_script(
            [
                [tool("Bash", command="sleep 0.05", run_in_background=True)],
                [tool("Bash", command="sleep 0.4")],
                say("both seen"),
            ]
        )
    )
    engine = make(tmp_path, provider)
    stream = engine.start("go")
    async for update in stream:
        if (
            update.kind == "tool_call_update"
            and update.status == "in_progress"
            and len(engine.messages) > 3
        ):
            await engine.enqueue([TextContent(text="USER-SAYS-STOP-SOON")])
    last_request = provider.requests[-1].messages[-1]
    text = last_request.model_dump_json()
    assert "<task-notification>" in text and "USER-SAYS-STOP-SOON" in text
    assert text.index("<task-notification>") < text.index("USER-SAYS-STOP-SOON")


async def test_background_worker_cannot_start_background_agents(tmp_path: Path) -> None:
    nested = tool("Agent", description="nested", prompt="marker N: more", run_in_background=True)
    provider = Routing(
        {
            "parent": [
                [
                    tool(
                        "Agent",
                        description="worker",
                        prompt="marker W: work",
                        run_in_background=True,
                    )
                ],
                say("started"),
                say("got it"),
            ],
            "marker W": [
                [nested],
                {
                    "expect": {"contains": "cannot start other background agents"},
                    "blocks": [{"type": "text", "text": "report from W: refused as expected"}],
                },
            ],
        }
    )
    engine = make(tmp_path, provider)
    await engine.run("go")
    await asyncio.wait_for(_until(lambda: bool(engine.notifications)), 5)
    await engine.run(None)
    provider.assert_complete()
    notes = "\n".join(m.text for m in engine.messages if "<task-notification>" in m.text)
    assert "refused as expected" in notes


async def test_foreground_agent_returns_only_its_report(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("secret-detail\n")
    provider = Routing(
        {
            "parent": [
                [
                    tool(
                        "Agent",
                        description="look",
                        prompt="marker F: read data.txt",
                        subagent_type="explore",
                    )
                ],
                {"expect": {"contains": "FOUND"}, "blocks": [{"type": "text", "text": "done"}]},
            ],
            "marker F": [[tool("Read", file_path="data.txt")], say("FOUND: the detail is there")],
        }
    )
    engine = make(tmp_path, provider)
    result = await engine.run("investigate")
    assert result.terminal.reason == "completed"
    provider.assert_complete()
    parent_view = "\n".join(m.model_dump_json() for m in engine.messages)
    assert "FOUND" in parent_view and "secret-detail" not in parent_view
    side = list((tmp_path).glob("parent/subagents/*.jsonl"))
    assert len(side) == 1 and "secret-detail" in side[0].read_text()


class PricedRouting(Routing):
    model = "claude-sonnet-4-6"  # a model with a list price, so spend is counted


async def test_the_budget_covers_what_subagents_spend(tmp_path: Path) -> None:
    """A subagent's spend counts for the session: the child stops when the session's budget
    is used up, and the parent does not ask the model again."""
    costly = {"blocks": [tool("Bash", command="echo hi")], "usage": {"input_tokens": 2_000_000}}
    provider = PricedRouting(
        {
            "parent": [[tool("Agent", description="spend", prompt="marker S: spend a lot")]],
            "marker S": [costly],
        }
    )
    engine = make(tmp_path, provider, config=EngineConfig(max_budget_usd=5.0))
    result = await engine.run("delegate")
    provider.assert_complete()  # neither asked the model again once the budget was gone
    assert result.terminal.reason == "budget_exhausted"
    report = next(m for m in engine.messages if "stopped early" in m.model_dump_json())
    assert "budget_exhausted" in report.model_dump_json()
    assert engine.meter.session.cost_usd is not None and engine.meter.session.cost_usd >= 6.0


async def test_subagents_inherit_the_depth_limit(tmp_path: Path) -> None:
    """With ``max_agent_depth: 1`` a subagent may not start one of its own (its engine
    used to fall back to the default depth of 2)."""
    provider = Routing(
        {
            "parent": [
                [tool("Agent", description="outer", prompt="marker O: delegate again")],
                say("all done"),
            ],
            "marker O": [
                [tool("Agent", description="inner", prompt="marker I: finish")],
                say("outer could not nest"),
            ],
            "marker I": [say("inner done")],
        }
    )
    engine = make(tmp_path, provider, config=EngineConfig(max_agent_depth=1))
    result = await engine.run("go deep")
    assert result.terminal.reason == "completed"
    assert provider.providers["marker I"].remaining == 1  # the inner agent never ran
    assert provider.providers["marker O"].remaining == 0
