from __future__ import annotations

from pathlib import Path

from tether.orchestration.batching import partition

from .support import Timeline, make_engine, text, timed_tool, use


def test_partition_is_greedy_in_model_order() -> None:
    calls = ["r1", "r2", "w1", "b1", "r3", "r4", "w2"]
    batches = partition(calls, lambda c: c.startswith("r"))
    assert [(b.calls, b.concurrent) for b in batches] == [
        (("r1", "r2"), True),
        (("w1",), False),
        (("b1",), False),
        (("r3", "r4"), True),
        (("w2",), False),
    ]


def test_partition_edge_cases() -> None:
    assert partition([], lambda _c: True) == []
    only_unsafe = partition(["a", "b"], lambda _c: False)
    assert [b.calls for b in only_unsafe] == [("a",), ("b",)]
    assert all(not b.concurrent for b in only_unsafe)


async def test_batches_run_in_order_with_serial_barriers(tmp_path: Path) -> None:
    timeline = Timeline()
    tools = [timed_tool("Safe", timeline, safe=True), timed_tool("Unsafe", timeline, safe=False)]
    script = [
        [
            use("Safe", name="a"),
            use("Safe", name="b"),
            use("Unsafe", name="c"),
            use("Unsafe", name="d"),
            use("Safe", name="e"),
            use("Safe", name="f"),
        ],
        [text("done")],
    ]
    engine = make_engine(tmp_path, script, tools)
    result = await engine.run("go")
    assert result.terminal.reason == "completed"
    t = timeline.time_of
    # a and b overlap; c starts after both end; d after c; e and f after d and overlap.
    assert t("start", "b") < t("end", "a")
    assert t("start", "c") >= max(t("end", "a"), t("end", "b"))
    assert t("start", "d") >= t("end", "c")
    assert t("start", "e") >= t("end", "d") and t("start", "f") >= t("end", "d")
    assert t("start", "f") < t("end", "e")
    # Results go back in call order.
    results = engine.messages[2].tool_results
    assert [r.text for r in results] == [f"done {n}" for n in "abcdef"]


async def test_concurrency_is_capped_at_ten(tmp_path: Path) -> None:
    timeline = Timeline()
    tools = [timed_tool("Safe", timeline, safe=True)]
    script = [[use("Safe", name=f"t{i}", delay=0.1) for i in range(14)], [text("ok")]]
    engine = make_engine(tmp_path, script, tools)
    result = await engine.run("go")
    assert result.terminal.reason == "completed"
    assert timeline.max_running == 10
    assert len(engine.messages[2].tool_results) == 14


async def test_safe_calls_start_while_the_model_still_streams(tmp_path: Path) -> None:
    timeline = Timeline()
    tools = [timed_tool("Safe", timeline, safe=True), timed_tool("Unsafe", timeline, safe=False)]
    script = [
        {
            "chunk_delay_ms": 60,
            "blocks": [
                use("Safe", name="early", delay=0.01),
                text("still talking after the first call " * 3),
                use("Unsafe", name="late", delay=0.01),
            ],
        },
        [text("ok")],
    ]
    engine = make_engine(tmp_path, script, tools)
    starts: dict[str, int] = {}
    chunks_seen = 0
    first_message_chunks: int | None = None
    async for update in engine.submit("go"):
        if update.kind == "agent_message_chunk":
            chunks_seen += 1
        if update.kind == "tool_call_update" and update.status == "in_progress":
            starts[update.tool_call_id] = chunks_seen
        if update.kind == "usage" and first_message_chunks is None:
            first_message_chunks = chunks_seen
    early, late = (u.id for u in engine.messages[1].tool_uses)
    # The safe call started before any text streamed after it; the unsafe one after all of it.
    assert starts[early] == 0
    assert first_message_chunks is not None and first_message_chunks > 1
    assert starts[late] == first_message_chunks
