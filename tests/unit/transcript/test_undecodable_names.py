"""A file name that is not UTF-8 (Linux names are bytes) reaches tool results as lone
surrogates (``os.fsdecode``): the turn goes on, the transcript keeps the name exactly, and
resume gives it back. Tools show such a name C-quoted, and take it back in that form."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tether.core.messages import Message, TextBlock, ToolResultBlock
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState
from tether.tools.names import shown_name
from tether.tools.registry import core_tools
from tether.transcript.records import ToolResultRecord, dump_record, load_record
from tether.transcript.resume import resume
from tether.transcript.writer import TranscriptWriter

NAME = os.fsdecode(b"caf\xe9-\xff.txt")


def test_a_record_with_lone_surrogates_round_trips() -> None:
    for text in (NAME, "\ud800 lone high", "mixed \udce9 and \u2028 and é"):
        block = ToolResultBlock(tool_use_id="t1", content=[TextBlock(text=text)])
        record = ToolResultRecord(session_id="s1", message=Message(role="user", content=[block]))
        line = dump_record(record)
        assert "\n" not in line and "\u2028" not in line
        line.encode("utf-8")  # the line itself is valid UTF-8 (escaped)
        assert json.loads(line)["message"]["content"][0]["content"][0]["text"] == text
        back = load_record(line)
        assert isinstance(back, ToolResultRecord)
        assert back.message.content[0] == block


async def test_a_turn_that_lists_an_undecodable_name_completes_and_resumes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / os.fsencode(NAME).decode("utf-8", "surrogateescape")).write_text("x")
    shown = shown_name(str(root / NAME))
    script = [
        [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}],
        # The model copies the name as it was shown: the file is reachable by it.
        [{"type": "tool_use", "name": "Read", "input": {"file_path": shown}}],
        [{"type": "text", "text": "FINAL"}],
    ]
    provider = ScriptedProvider(parse_script(script), context_window=200_000)
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
    _ = [u async for u in engine.submit("list the files")]
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "completed", engine.last_result.terminal
    provider.assert_complete()
    await engine.close()
    resumed = resume(tmp_path / "s.jsonl", "s1")
    results = [b for m in resumed.messages for b in m.content if isinstance(b, ToolResultBlock)]
    # The name is shown C-quoted (no API takes its bytes), and Read found the file by it.
    assert shown == '"' + str(root) + '/caf\\xe9-\\xff.txt"'
    assert results[0].text == shown, [b.text for b in results]
    assert not results[1].is_error and results[1].text.endswith("x"), results[1].text
