"""Resume reads the live part of the transcript first (``transcript/live.py``): the chain from
its last compaction boundary, the run state, the last meta record and the progress it needs.
Whatever the file holds, the resumed session is the one the whole-file read gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from tether.protocol.updates import PlanEntry, Usage
from tether.transcript import resume as resume_module
from tether.transcript.live import read_live
from tether.transcript.load import TranscriptDamagedError, read_transcript
from tether.transcript.payloads import (
    CheckpointData,
    CompactBoundaryData,
    FilesData,
    ModeData,
    PlanData,
    TaskData,
    ToolFinishedData,
    ToolStartedData,
)
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    MetaRecord,
    ProgressRecord,
    Record,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
    dump_record,
)
from tether.transcript.resume import ResumedSession, resume

SID = "s1"


def user(text: str, turn: str) -> UserRecord:
    return UserRecord(session_id=SID, turn_id=turn, message=user_text(text))


def asks(tool_id: str, turn: str, usage: Usage | None = None) -> AssistantRecord:
    use = ToolUseBlock(id=tool_id, name="Bash", input={"command": f"echo {tool_id}"})
    return AssistantRecord(
        session_id=SID, turn_id=turn, message=Message(role="assistant", content=[use]), usage=usage
    )


def says(text: str, turn: str) -> AssistantRecord:
    return AssistantRecord(
        session_id=SID,
        turn_id=turn,
        message=Message(role="assistant", content=[TextBlock(text=text)]),
        usage=Usage(input_tokens=10, output_tokens=2),
    )


def answer(tool_id: str, turn: str) -> ToolResultRecord:
    block = ToolResultBlock(tool_use_id=tool_id, content=[TextBlock(text=f"out {tool_id}")])
    return ToolResultRecord(
        session_id=SID, turn_id=turn, message=Message(role="user", content=[block])
    )


def system(data: Any, turn: str | None = None) -> SystemRecord:
    return SystemRecord(session_id=SID, turn_id=turn, data=data)


def progress(data: Any) -> ProgressRecord:
    return ProgressRecord(session_id=SID, data=data)


def chained(records: list[Record], parent: str | None = None) -> list[Record]:
    """Each chain record's parent is the chain record before it (meta and progress are
    outside the chain)."""
    for record in records:
        if isinstance(record, MetaRecord | ProgressRecord):
            continue
        record.parent_uuid = parent
        parent = record.uuid
    return records


def write(path: Path, records: list[Record]) -> None:
    path.write_text("".join(dump_record(r) + "\n" for r in records), encoding="utf-8")


def compacted_session() -> list[Record]:
    """Two turns, a compaction, a third turn with a tool call; run state on both sides of
    the boundary, a finished task, a checkpoint, meta written twice."""
    before = chained(
        [
            system(ModeData(mode="default")),
            user("first", "t1"),
            asks("a1", "t1"),
            answer("a1", "t1"),
            system(PlanData(entries=[PlanEntry(content="old plan", status="pending")]), "t1"),
            system(FilesData(files={"/w/a.py": {"hash": "1"}}), "t1"),
            says("done one", "t1"),
            user("second", "t2"),
            system(ModeData(mode="acceptEdits"), "t2"),
            says("done two", "t2"),
        ]
    )
    boundary = system(CompactBoundaryData(discovered_tools=["WebFetch"]), "t3")
    after = chained(
        [
            boundary,
            AttachmentRecord(
                session_id=SID, turn_id="t3", message=user_text("<summary>s</summary>")
            ),
            user("third", "t3"),
            asks("a3", "t3", Usage(input_tokens=50, output_tokens=5)),
            answer("a3", "t3"),
            system(PlanData(entries=[PlanEntry(content="new plan", status="pending")]), "t3"),
            says("done three", "t3"),
        ],
        parent=before[-1].uuid,
    )
    outside: list[Record] = [
        MetaRecord(session_id=SID, title="old title", turns=2),
        progress(ToolStartedData(tool_use_id="a1", name="Bash")),
        progress(
            ToolFinishedData(tool_use_id="a1", result=ToolResultBlock(tool_use_id="a1", content=[]))
        ),
        progress(TaskData(event="task_started", task_id="k1", description="watch")),
        progress(TaskData(event="task_finished", task_id="k1", status="completed")),
        progress(CheckpointData(turn_id="t3", path="/w/a.py", before="old text")),
        MetaRecord(session_id=SID, title="Compacted work", turns=3, usage=Usage(input_tokens=99)),
    ]
    return [
        *before[:5],
        *outside[:3],
        *before[5:],
        boundary,
        *outside[3:5],
        *after[1:],
        *outside[5:],
    ]


def facts(resumed: ResumedSession) -> dict[str, Any]:
    return {
        "messages": [m.model_dump() for m in resumed.messages],
        "message_turns": resumed.message_turns,
        "last_uuid": resumed.last_uuid,
        "mode": resumed.mode,
        "todos": resumed.todos,
        "files": resumed.files,
        "title": resumed.title,
        "turns": resumed.turns,
        "usage": resumed.usage,
        "discovered": resumed.discovered_tools,
        "anchor": resumed.context_anchor,
        "turn_parents": resumed.turn_parents,
        "repaired": resumed.repaired,
        "repairs": [r.model_dump(exclude={"uuid", "timestamp"}) for r in resumed.repairs],
    }


def whole(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> ResumedSession:
    with monkeypatch.context() as patch:
        patch.setattr(resume_module, "read_live", lambda *_a, **_k: None)
        return resume(path, SID, **kw)


def test_a_compacted_session_resumes_from_its_live_part_as_from_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    write(path, compacted_session())
    live = read_live(path)
    assert live is not None
    # Parsed: the run state before the boundary (newest mode, plan, files), then the boundary
    # and what follows it; the older conversation stays unread.
    kinds = [type(r).__name__ for r in live.chain]
    assert kinds == [
        "SystemRecord",  # plan
        "SystemRecord",  # files
        "SystemRecord",  # mode
        "SystemRecord",  # the boundary
        "AttachmentRecord",
        "UserRecord",
        "AssistantRecord",
        "ToolResultRecord",
        "SystemRecord",  # plan
        "AssistantRecord",
    ]
    assert live.users == 3
    # Tool start/finish progress is not parsed unless a call was left unanswered.
    assert {type(p.data).__name__ for p in live.loaded.progress} == {"TaskData", "CheckpointData"}

    fast, slow = resume(path, SID), whole(path, monkeypatch)
    assert facts(fast) == facts(slow)
    assert fast.mode == "acceptEdits" and [t.content for t in fast.todos] == ["new plan"]
    assert fast.files == {"/w/a.py": {"hash": "1"}}
    assert fast.title == "Compacted work" and fast.turns == 3
    assert fast.discovered_tools == ["WebFetch"]
    assert [m.text for m in fast.messages][:2] == ["<summary>s</summary>", "third"]
    assert [t for t, _ in fast.turn_parents] == ["t1", "t2", "t3"]


def test_damage_before_the_boundary_does_not_stop_a_resume(tmp_path: Path) -> None:
    """What the model no longer sees is not read: a damaged old line does not block the
    session (the whole-file read, used for history, still reports it)."""
    path = tmp_path / "s.jsonl"
    records = compacted_session()
    write(path, records)
    clean = resume(path, SID)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    old = next(i for i, r in enumerate(records) if isinstance(r, AssistantRecord))
    lines[old] = lines[old].replace('"content":[', '"content":[{{', 1)
    path.write_text("".join(lines), encoding="utf-8")

    with pytest.raises(TranscriptDamagedError):
        read_transcript(path)
    resumed = resume(path, SID)
    assert facts(resumed) == facts(clean)


def test_a_call_left_without_a_result_reads_the_tool_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uses = [ToolUseBlock(id=i, name="Bash", input={"command": "make"}) for i in ("x1", "x2")]
    both = AssistantRecord(
        session_id=SID, turn_id="t1", message=Message(role="assistant", content=list(uses))
    )
    records = chained([user("go", "t1"), both])
    finished = ToolResultBlock(tool_use_id="x2", content=[TextBlock(text="it ran")])
    records += [
        progress(ToolStartedData(tool_use_id="x1", name="Bash")),
        progress(ToolStartedData(tool_use_id="x2", name="Bash")),
        progress(ToolFinishedData(tool_use_id="x2", result=finished)),
    ]
    path = tmp_path / "s.jsonl"
    write(path, records)
    fast, slow = resume(path, SID), whole(path, monkeypatch)
    assert facts(fast) == facts(slow)
    assert any("may have partly run" in note for note in fast.repaired)
    assert "it ran" in str(fast.repairs[0].model_dump())


def test_a_rewound_session_resumes_on_its_newest_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trunk = chained([user("one", "t1"), says("reply one", "t1")])
    old = chained([user("two", "t2"), says("old reply", "t2")], parent=trunk[-1].uuid)
    new = chained([user("two again", "t3"), says("new reply", "t3")], parent=trunk[-1].uuid)
    path = tmp_path / "s.jsonl"
    write(path, [*trunk, *old, *new])
    assert read_live(path) is not None
    fast, slow = resume(path, SID), whole(path, monkeypatch)
    assert facts(fast) == facts(slow)
    assert [m.text for m in fast.messages] == ["one", "reply one", "two again", "new reply"]
    # A given leaf on the older branch.
    fast, slow = resume(path, SID, leaf=old[-1].uuid), whole(path, monkeypatch, leaf=old[-1].uuid)
    assert facts(fast) == facts(slow)
    assert fast.messages[-1].text == "old reply"


@pytest.mark.parametrize("shape", ["lost parent", "forked results", "torn tail", "other layout"])
def test_what_needs_a_repair_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    records = chained([user("go", "t1"), asks("x1", "t1"), answer("x1", "t1"), says("ok", "t1")])
    tail = ""
    if shape == "lost parent":
        records[2].parent_uuid = "gone"
    elif shape == "forked results":
        extra = answer("x1", "t1")
        extra.parent_uuid = records[1].uuid
        records.insert(3, extra)
    path = tmp_path / "s.jsonl"
    write(path, records)
    text = path.read_text(encoding="utf-8")
    if shape == "torn tail":
        tail = '{"v":1,"uuid":"cut'
    elif shape == "other layout":  # another writer's key order: valid, not indexable
        first, rest = text.split("\n", 1)
        text = json.dumps(json.loads(first), sort_keys=True) + "\n" + rest
    path.write_text(text + tail, encoding="utf-8")
    assert read_live(path) is None
    fast, slow = resume(path, SID), whole(path, monkeypatch)
    assert facts(fast) == facts(slow)
