"""A resumed session knows its context size from the usage stored with its newest model
response: the first request after a resume does not estimate the whole history again."""

from __future__ import annotations

from pathlib import Path

from tether.context.compaction import CompactionSettings, Compactor
from tether.core.messages import Message, TextBlock, ToolUseBlock, tool_result, user_text
from tether.protocol.updates import Usage
from tether.providers.base import TokenUsage
from tether.transcript.records import (
    AssistantRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
    dump_record,
)
from tether.transcript.resume import resume

SID = "s1"


def write(
    path: Path, records: list[UserRecord | AssistantRecord | ToolResultRecord | SystemRecord]
) -> None:
    parent: str | None = None
    for record in records:
        record.parent_uuid = parent
        parent = record.uuid
    path.write_text("".join(dump_record(r) + "\n" for r in records))


def test_the_newest_response_with_usage_anchors_the_context(tmp_path: Path) -> None:
    use = ToolUseBlock(id="t1", name="Read", input={"file_path": "a.py"})
    first = Usage(input_tokens=100, output_tokens=10)
    newest = Usage(input_tokens=20, output_tokens=5, cache_read_tokens=900)
    path = tmp_path / "s.jsonl"
    write(
        path,
        [
            UserRecord(session_id=SID, message=user_text("hello")),
            AssistantRecord(
                session_id=SID, message=Message(role="assistant", content=[use]), usage=first
            ),
            ToolResultRecord(
                session_id=SID, message=Message(role="user", content=[tool_result("t1", "x")])
            ),
            AssistantRecord(
                session_id=SID,
                message=Message(role="assistant", content=[TextBlock(text="done")]),
                usage=newest,
            ),
            UserRecord(session_id=SID, message=user_text("and now?")),
        ],
    )
    resumed = resume(path, SID)
    assert resumed.context_anchor == (4, newest)

    compactor = Compactor(CompactionSettings(), tmp_path / "results")
    covered, usage = resumed.context_anchor
    compactor.anchor(
        resumed.messages,
        covered,
        TokenUsage(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens),
    )
    assert compactor.gauge is not None
    measured = compactor.gauge.measure(resumed.messages)
    tail = compactor.counter.message(resumed.messages[-1])
    assert measured == 20 + 900 + 5 + tail


def test_no_anchor_before_a_response_or_after_a_compaction_without_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [UserRecord(session_id=SID, message=user_text("hello"))])
    assert resume(path, SID).context_anchor is None
    write(
        path,
        [
            UserRecord(session_id=SID, message=user_text("hello")),
            AssistantRecord(
                session_id=SID,
                message=Message(role="assistant", content=[TextBlock(text="hi")]),
                usage=Usage(input_tokens=5, output_tokens=1),
            ),
            SystemRecord(session_id=SID, subtype="compact_boundary", data={}),
            UserRecord(session_id=SID, message=user_text("summary")),
        ],
    )
    assert resume(path, SID).context_anchor is None
