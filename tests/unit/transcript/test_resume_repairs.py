"""Resume and its repairs: torn tail, damaged middle, missing parents, forked results,
tools that were running, tasks that were running, the lock, run state."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from tether.errors import SessionError
from tether.providers.convert_anthropic import message_param
from tether.testing.anthropic_rules import check_pairing, merge
from tether.transcript.chain import build_chain
from tether.transcript.load import TranscriptDamagedError, read_transcript
from tether.transcript.records import (
    AssistantRecord,
    MetaRecord,
    ProgressRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
    dump_record,
    load_record,
)
from tether.transcript.resume import LOST_CALL, PARTLY_RAN, resume
from tether.transcript.session import open_for_resume
from tether.transcript.writer import TranscriptWriter

SID = "s1"


def user(text: str, parent: str | None = None) -> UserRecord:
    return UserRecord(session_id=SID, parent_uuid=parent, message=user_text(text))


def assistant(*blocks: object, parent: str | None = None) -> AssistantRecord:
    return AssistantRecord(
        session_id=SID,
        parent_uuid=parent,
        message=Message(role="assistant", content=list(blocks)),  # type: ignore[arg-type]
    )


def results(*pairs: tuple[str, str], parent: str | None = None) -> ToolResultRecord:
    blocks = [ToolResultBlock(tool_use_id=i, content=[TextBlock(text=t)]) for i, t in pairs]
    return ToolResultRecord(
        session_id=SID, parent_uuid=parent, message=Message(role="user", content=list(blocks))
    )  # type: ignore[arg-type]


def write_lines(path: Path, records: list[object], tail: bytes = b"") -> None:
    path.write_bytes(b"".join(dump_record(r).encode() + b"\n" for r in records) + tail)  # type: ignore[arg-type]


def linked(*records: object) -> list[object]:
    parent = None
    for r in records:
        if not isinstance(r, (MetaRecord, ProgressRecord)):
            r.parent_uuid = parent  # type: ignore[attr-defined]
            parent = r.uuid  # type: ignore[attr-defined]
    return list(records)


def conversation() -> list[object]:
    use = ToolUseBlock(id="t1", name="Read", input={"file_path": "a.py"})
    return linked(
        user("hello"),
        assistant(TextBlock(text="reading"), use),
        results(("t1", "contents")),
        assistant(TextBlock(text="done")),
    )


async def test_torn_last_line_is_set_aside_and_appending_continues(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = conversation()
    write_lines(path, records, tail=b'{"v":1,"uuid":"x","type":"assist')
    resumed, writer = await open_for_resume(path, SID)
    assert [m.role for m in resumed.messages] == ["user", "assistant", "user", "assistant"]
    assert any("torn" in note for note in resumed.repaired)
    assert path.read_bytes().endswith(b"\n")
    asides = list(tmp_path.glob("s.jsonl.torn-*"))
    assert len(asides) == 1 and asides[0].read_bytes().startswith(b'{"v":1')
    writer.append(user("next"))
    await writer.close()
    again = resume(path, SID)
    assert again.messages[-1].text == "next"
    assert again.chain[-1].parent_uuid == records[-1].uuid  # type: ignore[attr-defined]


def test_damage_in_the_middle_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = conversation()
    lines = [dump_record(r) for r in records]  # type: ignore[arg-type]
    lines.insert(2, "{this is not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptDamagedError) as caught:
        resume(path, SID)
    assert caught.value.line == 3 and caught.value.last_good == 2
    assert "line 3" in str(caught.value) and "last good point" in str(caught.value)


async def test_recover_resumes_from_the_last_good_point(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = conversation()
    lines = [dump_record(r) for r in records]  # type: ignore[arg-type]
    lines.insert(2, "garbage")
    path.write_text("\n".join(lines) + "\n")
    resumed, writer = await open_for_resume(path, SID, recover=True)
    await writer.close()
    # user + assistant(tool_use) survive; the dangling tool use gets a synthetic result.
    assert [m.role for m in resumed.messages] == ["user", "assistant", "user"]
    assert resumed.messages[-1].tool_results[0].is_error
    damaged = list(tmp_path.glob("s.jsonl.damaged-*"))
    assert len(damaged) == 1 and b"garbage" in damaged[0].read_bytes()
    assert b"garbage" not in path.read_bytes()
    resume(path, SID)  # and the repaired file loads cleanly


def test_missing_parent_reattaches_to_the_nearest_live_ancestor(tmp_path: Path) -> None:
    records = conversation()
    records[2].parent_uuid = "deleted-record"  # type: ignore[attr-defined]
    chain, notes = build_chain(records)  # type: ignore[arg-type]
    assert [r.uuid for r in chain] == [r.uuid for r in records]  # type: ignore[attr-defined]
    assert any("re-attached" in n for n in notes)


def test_forked_parallel_results_are_stitched_back(tmp_path: Path) -> None:
    first = user("go")
    uses = [ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": f"{i}.py"}) for i in range(3)]
    call = assistant(*uses, parent=first.uuid)
    # Each result chained to the assistant message (a fork), the next turn after the last one.
    forks = [results((f"t{i}", f"r{i}"), parent=call.uuid) for i in range(3)]
    answer = assistant(TextBlock(text="ok"), parent=forks[-1].uuid)
    chain, notes = build_chain([first, call, *forks, answer])
    tool_message = chain[2]
    assert isinstance(tool_message, ToolResultRecord)
    assert [b.tool_use_id for b in tool_message.message.tool_results] == ["t0", "t1", "t2"]
    assert any("stitched" in n for n in notes)


def test_tool_that_was_running_may_have_partly_run(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    use = ToolUseBlock(id="b1", name="Bash", input={"command": "make install"})
    records = linked(user("install"), assistant(use))
    started = ProgressRecord(
        session_id=SID, event="tool_started", data={"toolUseId": "b1", "name": "Bash"}
    )
    write_lines(path, [*records, started])
    resumed = resume(path, SID)
    (result,) = resumed.messages[-1].tool_results
    assert result.is_error and result.text == PARTLY_RAN
    assert len(resumed.repairs) == 1


def test_running_background_tasks_are_reported_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = {
        "taskId": "abcd",
        "toolUseId": "t9",
        "description": "watch tests",
        "outputFile": "/tmp/o",
    }
    records = [
        *linked(user("start watcher"), assistant(TextBlock(text="started"))),
        ProgressRecord(session_id=SID, event="task_started", data=data),
        ProgressRecord(session_id=SID, event="task_started", data={**data, "taskId": "done1"}),
        ProgressRecord(session_id=SID, event="task_finished", data={**data, "taskId": "done1"}),
    ]
    write_lines(path, records)
    resumed = resume(path, SID)
    note = resumed.messages[-1].text
    assert "<task-id>abcd</task-id>" in note and "done1" not in note
    assert "interrupted" in note


def test_compaction_boundary_and_run_state(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = linked(
        user("old talk"),
        assistant(TextBlock(text="old answer")),
        SystemRecord(session_id=SID, subtype="mode", data={"mode": "acceptEdits"}),
        SystemRecord(session_id=SID, subtype="compact_boundary", data={"trigger": "auto"}),
        user("summary of the earlier conversation"),
        SystemRecord(
            session_id=SID,
            subtype="plan",
            data={"entries": [{"content": "x", "status": "pending"}]},
        ),
        SystemRecord(
            session_id=SID,
            subtype="files",
            data={"files": {"/w/a.py": {"hash": "h", "partial": False}}},
        ),
        assistant(TextBlock(text="continuing")),
    )
    write_lines(path, [*records, MetaRecord(session_id=SID, title="t", turns=7)])
    resumed = resume(path, SID)
    assert [m.text for m in resumed.messages] == [
        "summary of the earlier conversation",
        "continuing",
    ]
    assert resumed.mode == "acceptEdits"
    assert [e.content for e in resumed.todos] == ["x"]
    assert resumed.files == {"/w/a.py": {"hash": "h", "partial": False}}
    assert resumed.turns == 7 and resumed.title == "t"


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = TranscriptWriter(path, SID)
    first.open()
    second = TranscriptWriter(path, SID)
    with pytest.raises(SessionError, match=f"open in Tether process {os.getpid()} "):
        second.open()
    first.release()
    second.open()
    second.release()


def test_the_refusal_names_the_process_holding_the_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'ab'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(SessionError, match=f"open in Tether process {holder.pid} "):
            TranscriptWriter(path, SID).open()
    finally:
        holder.communicate("", timeout=10)


async def test_files_are_private(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "ws" / "s.jsonl", SID)
    writer.open()
    writer.append(user("secret"))
    await writer.close()
    assert os.stat(tmp_path / "ws" / "s.jsonl").st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "text",
    [
        "line\u2028separator\u2029paragraph\u0085next",
        "nul\x00in\x00output",
        "invalid utf-8 from a subprocess: \\xff\\xfe (escaped)",
        "x" * 2_000_000,
        "emoji 😀 and CJK 你好 and RTL \u202e",
    ],
)
def test_records_round_trip_any_text(tmp_path: Path, text: str) -> None:
    record = results(("t1", text))
    line = dump_record(record)
    assert (
        "\n" not in line and "\u2028" not in line and "\u2029" not in line and "\u0085" not in line
    )
    back = load_record(line)
    assert isinstance(back, ToolResultRecord) and back.message.tool_results[0].text == text
    path = tmp_path / "s.jsonl"
    write_lines(
        path, linked(user("q"), assistant(ToolUseBlock(id="t1", name="Bash", input={})), record)
    )
    loaded = read_transcript(path)
    assert loaded.records[-1].message.tool_results[0].text == text  # type: ignore[union-attr]


def _accepted_by_the_api(messages: list[Message]) -> None:
    """The strict fake's pairing rules (those of the Messages API) over ``messages``."""
    params: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        param = message_param(message)
        if param is not None:
            params.append({**param, "content": list(param["content"]), "index": i})  # type: ignore[arg-type]
    check_pairing(merge(params))


def test_a_lost_line_holding_a_tool_call_or_its_result_is_mended(tmp_path: Path) -> None:
    calls = [ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": "a"}) for i in range(3)]
    records = linked(
        user("one"),
        assistant(TextBlock(text="reading"), calls[0]),  # this line is lost
        results(("t0", "contents of a")),
        assistant(TextBlock(text="read it"), calls[1]),
        results(("t1", "again")),  # and this one
        assistant(TextBlock(text="and"), calls[2]),
        results(("t2", "more")),
        assistant(TextBlock(text="done")),
        user("two"),
        assistant(TextBlock(text="re two")),
    )
    path = tmp_path / "s.jsonl"
    write_lines(path, [r for i, r in enumerate(records) if i not in (1, 4)])
    resumed = resume(path, SID)
    _accepted_by_the_api([*resumed.messages, user_text("three")])
    texts = [b.text for m in resumed.messages for b in m.content if isinstance(b, TextBlock)]
    assert texts[:2] == ["one", f"{LOST_CALL}\ncontents of a"]  # the result kept, as text
    assert "two" in texts and "re two" in texts
    notes = " ".join(resumed.repaired)
    assert "1 tool result(s) whose call was lost" in notes
    assert "1 tool call(s) whose result was lost" in notes


async def test_a_torn_last_line_leaves_the_turn_count_with_the_history(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = linked(
        user("one"),
        assistant(TextBlock(text="re one")),
        MetaRecord(session_id=SID, title="t", turns=1),
        user("two"),
        assistant(TextBlock(text="re two")),
    )
    for record, turn in zip(records, ["t1", "t1", None, "t2", "t2"], strict=True):
        if turn is not None:
            record.turn_id = turn  # type: ignore[attr-defined]
    write_lines(path, records, tail=b'{"v":1,"type":"meta","turns":2,"ti')  # the crash
    resumed, writer = await open_for_resume(path, SID)
    try:
        assert any("torn" in note for note in resumed.repaired)
        assert resumed.turns == 2
    finally:
        await writer.close()
