"""System and progress payloads are typed on the way in and out, keep the on-disk shape
(``subtype``/``event`` beside a camelCase ``data``), and anything a reader does not know —
a newer kind, a damaged payload, an attachment kind from elsewhere — loads without failing
a resume."""

from __future__ import annotations

import json
from pathlib import Path

from tether.core.messages import TextBlock, ToolResultBlock
from tether.protocol.stop_reasons import STOP_REASONS, stop_reason
from tether.transcript.payloads import (
    CompactBoundaryData,
    ModeData,
    ToolFinishedData,
    TurnEndData,
    UnknownProgressData,
    UnknownSystemData,
)
from tether.transcript.records import (
    AttachmentRecord,
    ProgressRecord,
    SystemRecord,
    dump_record,
    load_record,
)
from tether.transcript.resume import resume

SID = "s1"


def test_a_typed_payload_is_written_in_the_shape_on_disk() -> None:
    record = SystemRecord(
        session_id=SID,
        data=CompactBoundaryData(
            trigger="auto", tokens_before=9, tokens_after=3, discovered_tools=["mcp__x"]
        ),
    )
    raw = json.loads(dump_record(record))
    assert raw["subtype"] == "compact_boundary"
    assert raw["data"] == {
        "trigger": "auto",
        "tokensBefore": 9,
        "tokensAfter": 3,
        "discoveredTools": ["mcp__x"],
    }
    again = load_record(dump_record(record))
    assert isinstance(again, SystemRecord) and again.data == record.data


def test_a_tool_result_round_trips_inside_its_progress_record() -> None:
    block = ToolResultBlock(tool_use_id="t1", content=[TextBlock(text="ok")], is_error=True)
    record = ProgressRecord(session_id=SID, data=ToolFinishedData(tool_use_id="t1", result=block))
    raw = json.loads(dump_record(record))
    assert raw["event"] == "tool_finished" and raw["data"]["toolUseId"] == "t1"
    again = load_record(dump_record(record))
    assert isinstance(again, ProgressRecord) and isinstance(again.data, ToolFinishedData)
    assert again.data.result == block


def test_unknown_and_damaged_payloads_load_as_unknown() -> None:
    newer = load_record(
        json.dumps({"type": "system", "subtype": "someday", "sessionId": SID, "data": {"a": 1}})
    )
    assert isinstance(newer, SystemRecord) and isinstance(newer.data, UnknownSystemData)
    assert newer.subtype == "someday"
    damaged = load_record(
        json.dumps({"type": "system", "subtype": "mode", "sessionId": SID, "data": {"mode": 3}})
    )
    assert isinstance(damaged, SystemRecord) and not isinstance(damaged.data, ModeData)
    progress = load_record(
        json.dumps({"type": "progress", "event": "tool_finished", "sessionId": SID, "data": {}})
    )
    assert isinstance(progress, ProgressRecord)
    assert isinstance(progress.data, UnknownProgressData)
    kind = load_record(
        json.dumps(
            {
                "type": "attachment",
                "attachment": "from_elsewhere",
                "sessionId": SID,
                "message": {"role": "user", "content": [{"type": "text", "text": "kept"}]},
            }
        )
    )
    assert isinstance(kind, AttachmentRecord) and kind.attachment == "context"
    assert kind.message.text == "kept"


def test_a_resume_goes_through_unknown_records(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": SID,
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        },
        {"type": "system", "uuid": "x1", "parentUuid": "u1", "sessionId": SID, "subtype": "new"},
        {"type": "system", "uuid": "x2", "parentUuid": "x1", "sessionId": SID, "subtype": "mode"},
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "x2",
            "sessionId": SID,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        },
        {"type": "progress", "sessionId": SID, "event": "task_started", "data": {"x": 1}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    resumed = resume(path, SID)
    assert [m.text for m in resumed.messages] == ["hi", "hello"]
    assert resumed.mode is None  # the mode record had no payload: nothing to restore


def test_one_stop_reason_table() -> None:
    assert stop_reason("completed") == "end_turn"
    assert stop_reason("aborted") == "cancelled"
    assert stop_reason("hook_stopped") == "error"
    assert stop_reason("a_reason_from_a_newer_tether") == "error"
    assert set(STOP_REASONS.values()) <= {
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "cancelled",
        "refusal",
        "error",
    }
    data = TurnEndData(reason="max_turns")
    assert stop_reason(data.reason) == "max_turn_requests"
