"""Transcript records: typed, versioned, one JSON object per line.

Conversation records (user, assistant, tool_result, attachment, system) join the
``parentUuid`` chain; ``meta`` records (title, workspace, mode...) are tail metadata outside
the chain. The one adapter ``RECORD_ADAPTER`` reads and writes them all.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid as uuidlib
from typing import Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    computed_field,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from tether.core.json_input import parse_json
from tether.core.messages import Message
from tether.protocol.content import ContentBlock
from tether.protocol.updates import RejectedBy, Usage
from tether.transcript.migrate import migrate
from tether.transcript.payloads import ATTACHMENT_KINDS, AttachmentKind, ProgressData, SystemData

SCHEMA_VERSION = 1


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_uuid() -> str:
    return str(uuidlib.uuid4())


class _Record(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    v: int = SCHEMA_VERSION
    uuid: str = Field(default_factory=new_uuid)
    parent_uuid: str | None = None
    session_id: str
    timestamp: str = Field(default_factory=now_iso)
    turn_id: str | None = None


class UserRecord(_Record):
    """A prompt the user sent; ``content`` is what the editor showed."""

    type: Literal["user"] = "user"
    message: Message
    content: list[ContentBlock] = Field(default_factory=lambda: list[ContentBlock]())


class AssistantRecord(_Record):
    type: Literal["assistant"] = "assistant"
    message: Message
    model: str = ""
    stop_reason: str | None = None
    usage: Usage | None = None


class ToolResultRecord(_Record):
    type: Literal["tool_result"] = "tool_result"
    message: Message
    display: dict[str, list[dict[str, Any]]] | None = None
    """What the editor showed for each tool call (diff, terminal), by tool_use id, so a
    loaded session looks as it did live."""
    rejected: dict[str, RejectedBy] | None = None
    """Calls that did not run because someone said no, by tool_use id: who said it."""


class AttachmentRecord(_Record):
    """A meta message for the model (memory, notifications...), hidden in editor views."""

    type: Literal["attachment"] = "attachment"
    message: Message
    attachment: AttachmentKind = "context"

    @field_validator("attachment", mode="before")
    @classmethod
    def _known_kind(cls, kind: object) -> object:
        # A kind this Tether does not know still carries a message the model saw.
        return kind if isinstance(kind, str) and kind in ATTACHMENT_KINDS else "context"


class SystemRecord(_Record):
    """An event in the conversation: turn end, compaction boundary, mode change... The
    payload's model says which (``subtype`` on disk)."""

    type: Literal["system"] = "system"
    data: SystemData

    @model_validator(mode="before")
    @classmethod
    def _tag_data(cls, raw: object) -> object:
        return _tag(raw, "subtype")

    @computed_field
    @property
    def subtype(self) -> str:
        return self.data.subtype


class MetaRecord(_Record):
    """Tail metadata (title, workspace, mode); re-appended so listing reads only the tail."""

    type: Literal["meta"] = "meta"
    title: str | None = None
    workspace: str | None = None
    created_at: str | None = None
    model: str | None = None
    mode: str | None = None
    turns: int = 0
    usage: Usage | None = None
    """Token and cost totals of the session so far (a resumed session keeps counting)."""


class ProgressRecord(_Record):
    """Progress outside the chain, e.g. "tool started" (durable before a side effect). The
    payload's model says which (``event`` on disk)."""

    type: Literal["progress"] = "progress"
    data: ProgressData

    @model_validator(mode="before")
    @classmethod
    def _tag_data(cls, raw: object) -> object:
        return _tag(raw, "event")

    @computed_field
    @property
    def event(self) -> str:
        return self.data.event


def _tag(raw: object, key: str) -> object:
    """On disk the payload's kind sits beside it; the payload models carry it inside."""
    if not isinstance(raw, dict):
        return raw
    fields = cast("dict[str, Any]", raw)
    if key in fields:
        data = fields.get("data")
        if not isinstance(data, BaseModel):
            inner = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
            return {**fields, "data": {**inner, key: fields[key]}}
    return fields


ChainRecord = UserRecord | AssistantRecord | ToolResultRecord | AttachmentRecord | SystemRecord
Record = Annotated[ChainRecord | MetaRecord | ProgressRecord, Field(discriminator="type")]
RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)


_LINE_BREAKERS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}


def dump_record(record: Record) -> str:
    """One line of JSON. Characters some readers treat as line breaks are escaped (they can
    only occur inside JSON strings, so the escape is exact). Text that cannot be UTF-8 (a
    file name's undecodable bytes, as ``os.fsdecode`` gives them: lone surrogates) is
    written as JSON's ``\\udcXX`` escapes, which ``load_record`` reads back as the same
    text."""
    try:
        line = record.model_dump_json(by_alias=True, exclude_none=True)
    except ValueError:  # pydantic's serialisation error: lone surrogates, here
        fields = record.model_dump(mode="json", by_alias=True, exclude_none=True)
        line = json.dumps(fields, separators=(",", ":"))
    for raw, escaped in _LINE_BREAKERS.items():
        if raw in line:
            line = line.replace(raw, escaped)
    return line


RECORD_DEPTH = 256
"""Deepest line read back: deeper than pydantic writes (255), so every record Tether wrote
can be read, and a line nested deeper is damage, never a crash."""


def load_record(line: str | bytes) -> Record:
    """Parse one line; records of older schema versions are migrated first."""
    try:
        record = RECORD_ADAPTER.validate_json(line)
        if record.v == SCHEMA_VERSION:
            return record
    except ValidationError:
        pass
    raw = parse_json(line, max_depth=RECORD_DEPTH)
    if not isinstance(raw, dict):
        raise ValueError("a record must be a JSON object")
    return RECORD_ADAPTER.validate_python(migrate(raw, SCHEMA_VERSION))  # pyright: ignore[reportUnknownArgumentType]
