"""A long scripted session crosses every rung of the compaction ladder, in order; after
auto-compaction the next request carries the summary, the re-read files and the running
task IDs; and the session resumes from disk afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.context.compaction import CompactionSettings
from tether.context.trim import CLEARED
from tether.core.messages import ToolUseBlock
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.orchestration.pipeline import run_tool_use
from tether.protocol.updates import Compaction
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState
from tether.tools.registry import core_tools
from tether.transcript.resume import resume
from tether.transcript.writer import TranscriptWriter


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def bash_output(i: int) -> dict[str, Any]:
    return tool("Bash", command=f"python3 -c \"print('output {i} ' * 300)\"")


SCRIPT: list[Any] = [
    [
        tool(
            "TodoWrite",
            todos=[{"content": "Study big.txt", "status": "in_progress", "activeForm": "Studying"}],
        ),
        tool("Bash", command="sleep 60", run_in_background=True, description="long watcher"),
    ],
    [tool("Read", file_path="big.txt")],
    [bash_output(1)],
    [bash_output(2)],
    [bash_output(3)],
    [bash_output(4)],
    [{"type": "text", "text": "Thinking at length. " * 1500}, tool("Read", file_path="notes.md")],
    {
        "expect": {"contains": "about to be replaced by a summary"},
        "blocks": [
            {
                "type": "text",
                "text": "<analysis>...</analysis><summary>SUMMARY-XYZ: studied big.txt</summary>",
            }
        ],
    },
    [{"type": "text", "text": "Done after compaction."}],
]


async def test_every_rung_in_order_then_resume(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text(
        "".join(f"big line {i} with some padding text\n" for i in range(800))
    )
    (root / "notes.md").write_text("NOTES-CONTENT: remember the invariants\n")
    provider = ScriptedProvider(parse_script(SCRIPT), context_window=200_000)
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s1")
    writer.open()
    engine = QueryEngine(
        session_id="s1",
        cwd=root,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(),
        state=SessionRunState(mode="bypassPermissions"),
        transcript=writer,
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    prefix = engine.compactor.counter.prefix(engine.assembler.system(), engine.tool_specs())
    engine.compactor.settings = CompactionSettings(
        tool_result_max_chars=8_000,
        preview_chars=400,
        microcompact_keep=2,
        warning_threshold=prefix + 2_500,
        auto_threshold=prefix + 6_000,
    )
    updates = [u async for u in engine.submit("Study big.txt and the notes")]
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    provider.assert_complete()

    strategies = [u.strategy for u in updates if isinstance(u, Compaction)]
    firsts = [strategies.index(s) for s in ("tool_result_budget", "microcompact", "summary")]
    assert firsts == sorted(firsts), strategies
    summary = next(u for u in updates if isinstance(u, Compaction) and u.strategy == "summary")
    assert summary.trigger == "auto" and summary.tokens_after < summary.tokens_before

    # The request after the summary carries the summary, the re-read files, the task IDs.
    after = provider.requests[-1]
    sent = "\n".join(m.model_dump_json() for m in after.messages)
    task = engine.tasks.running()[0]
    assert "SUMMARY-XYZ" in sent
    assert "NOTES-CONTENT" in sent and "big line 3 " in sent
    assert task.id in sent and "long watcher" in sent
    assert "Study big.txt" in sent  # the todo plan
    # Before the summary, the big result had been stored to a file and old results cleared.
    (stored,) = (tmp_path / "tool-results").glob("*.txt")
    assert "big line 799" in stored.read_text()
    # The model can read the stored text back in parts (it is outside the workspace).
    read = ToolUseBlock(
        id="r1", name="Read", input={"file_path": str(stored), "offset": 700, "limit": 5}
    )
    back = await run_tool_use(read, engine.tool_runtime)
    assert not back.failed and "big line 700 " in back.block.text
    assert "big line 710 " not in back.block.text
    outside = ToolUseBlock(id="r2", name="Read", input={"file_path": str(tmp_path / "s.jsonl")})
    assert (await run_tool_use(outside, engine.tool_runtime)).failed
    third = "\n".join(m.model_dump_json() for m in provider.requests[2].messages)
    assert f"the full text is in {stored}" in third
    earlier = "\n".join(m.model_dump_json() for m in provider.requests[6].messages)
    assert CLEARED in earlier

    await engine.close()
    resumed = resume(tmp_path / "s.jsonl", "s1")
    assert "SUMMARY-XYZ" in resumed.messages[0].text
    assert len(resumed.messages) < 10
    assert resumed.messages[-1].text == "Done after compaction."
