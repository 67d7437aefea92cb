"""Rebuild a session from its transcript: index, pick the leaf, walk ``parentUuid`` back,
keep what follows the last compaction boundary, restore run state."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tether.engine.messages import (
    INTERRUPTED_TOOL_RESULT,
    Message,
    tool_result,
    unanswered_tool_uses,
)
from tether.errors import SessionError
from tether.protocol.updates import Mode, PlanEntry
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    ChainRecord,
    MetaRecord,
    ProgressRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
    load_record,
)


@dataclass
class LoadedTranscript:
    chain: list[ChainRecord]
    meta: MetaRecord | None
    torn_tail: str | None = None
    """A partial last line (crash mid-write), cut off before appending again."""


@dataclass
class ResumedSession:
    session_id: str
    messages: list[Message]
    chain: list[ChainRecord]
    last_uuid: str | None
    mode: Mode | None = None
    todos: list[PlanEntry] = field(default_factory=lambda: list[PlanEntry]())
    title: str | None = None
    turns: int = 0
    repaired: list[str] = field(default_factory=lambda: list[str]())


def read_transcript(path: Path) -> LoadedTranscript:
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    torn: str | None = None
    if lines and lines[-1] != b"":
        torn = lines[-1].decode("utf-8", "replace")
        lines = lines[:-1]
    records: dict[str, ChainRecord] = {}
    order: list[str] = []
    meta: MetaRecord | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = load_record(line.decode("utf-8", "surrogateescape"))
        except (ValidationError, ValueError) as e:
            raise SessionError(f"{path}: line {number} is damaged ({e.__class__.__name__})")
        if isinstance(record, MetaRecord):
            meta = record
            continue
        if isinstance(record, ProgressRecord):
            continue
        records[record.uuid] = record
        order.append(record.uuid)
    parents = {r.parent_uuid for r in records.values() if r.parent_uuid}
    leaf = next((u for u in reversed(order) if u not in parents), None)
    chain: list[ChainRecord] = []
    seen: set[str] = set()
    cursor = leaf
    while cursor is not None and cursor in records and cursor not in seen:
        seen.add(cursor)
        record = records[cursor]
        chain.append(record)
        cursor = record.parent_uuid
    chain.reverse()
    return LoadedTranscript(chain, meta, torn)


def resume(path: Path, session_id: str) -> ResumedSession:
    loaded = read_transcript(path)
    chain = loaded.chain
    start = 0
    for i, record in enumerate(chain):
        if isinstance(record, SystemRecord) and record.subtype == "compact_boundary":
            start = i + 1
    messages: list[Message] = []
    mode: Mode | None = None
    todos: list[PlanEntry] = []
    turns = 0
    for record in chain[start:]:
        if isinstance(record, (UserRecord, AssistantRecord, ToolResultRecord, AttachmentRecord)):
            messages.append(record.message)
        if isinstance(record, UserRecord):
            turns += 1
    for record in chain:
        if isinstance(record, SystemRecord) and record.subtype == "mode":
            mode = record.data.get("mode")
        if isinstance(record, SystemRecord) and record.subtype == "plan":
            todos = [PlanEntry.model_validate(e) for e in record.data.get("entries", [])]
    repaired: list[str] = []
    dangling = unanswered_tool_uses(messages)
    if dangling:
        results = [tool_result(u.id, INTERRUPTED_TOOL_RESULT, is_error=True) for u in dangling]
        messages.append(Message(role="user", content=list(results)))
        repaired.append(f"{len(dangling)} tool call(s) without a result marked as interrupted")
    return ResumedSession(
        session_id=session_id,
        messages=messages,
        chain=chain,
        last_uuid=chain[-1].uuid if chain else None,
        mode=mode,
        todos=todos,
        title=loaded.meta.title if loaded.meta else None,
        turns=loaded.meta.turns if loaded.meta else turns,
        repaired=repaired,
    )
