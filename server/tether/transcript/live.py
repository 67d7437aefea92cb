"""Resume reads what the next request needs first: the live part of the chain.

A long session's transcript is mostly what the model no longer sees: conversation before
the last compaction boundary and the progress of tools long finished. Every line starts the
same way (``{"v":1,"uuid":…,"parentUuid":…,"sessionId":…,"timestamp":…,"turnId":…,
"type":…``) and a system or progress line ends with its kind, so one pattern match per line
(no JSON) indexes the file: the chain is walked from the newest leaf by those facts, and
only these lines are parsed:

- the chain from its last compaction boundary to the leaf (the messages the model sees);
- the newest mode, plan and files records before that boundary (the run state);
- the last ``meta`` record (title, turn count, usage);
- progress other than "tool started/finished": task events and rewind checkpoints (the
  tool events are parsed only when a tool call was left without a result, the crash case).

The rest is read when someone asks for it: a follower's history (``Session.history``) and
the listing read the file themselves. Anything this reading cannot vouch for falls back to
the whole-file read (``load.py``), which repairs and reports: a line that does not match the
pattern, a torn last line, a record whose parent is missing, tool results that forked the
chain, a needed line that does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from tether.core.files import read_regular
from tether.transcript.load import LoadedTranscript
from tether.transcript.prefix import PREFIX
from tether.transcript.records import (
    ChainRecord,
    MetaRecord,
    ProgressRecord,
    load_record,
)

_KIND = re.compile(rb',"(?:subtype|event)":"([a-z_]+)"\}\s*$')
CHAIN_TYPES = frozenset({b"user", b"assistant", b"tool_result", b"attachment", b"system"})
RUN_STATE = (b"mode", b"plan", b"files")
TOOL_EVENTS = frozenset({b"tool_started", b"tool_finished"})


class _Line(NamedTuple):
    """One record's facts, from its line's first bytes (and last, for system and progress
    records: their kind)."""

    start: int
    uuid: bytes
    parent: bytes | None
    turn: bytes | None
    type: bytes
    kind: bytes | None
    """A system record's subtype or a progress record's event."""


@dataclass
class LiveRead:
    """What ``resume`` needs, read from the live part of the file."""

    loaded: LoadedTranscript
    """Parsed records: ``records`` holds the parsed part of the chain, in chain order."""
    chain: list[ChainRecord]
    users: int
    """User records on the whole chain."""
    turn_parents: list[tuple[str, str | None]] = field(
        default_factory=lambda: list[tuple[str, str | None]]()
    )
    """Every turn on the whole chain with the parent of its first record (rewind points)."""
    _data: bytes = b""
    _tool_lines: list[_Line] = field(default_factory=lambda: list[_Line]())

    def tool_progress(self) -> list[ProgressRecord]:
        """The "tool started/finished" records (parsed now: a call was left unanswered)."""
        return [
            r
            for r in (_parse(self._data, line) for line in self._tool_lines)
            if isinstance(r, ProgressRecord)
        ]


def read_live(path: Path, leaf: str | None = None) -> LiveRead | None:
    """The live part of the transcript, or None when only the whole-file read will do."""
    data = read_regular(path)
    if b"\x00" in data:
        return None  # NUL bytes (a disk fault): the whole read finds them and says where
    lines = _index(data)
    if lines is None:
        return None
    chain_lines = [line for line in lines if line.type in CHAIN_TYPES]
    if not chain_lines:
        return None
    chain = _walk(chain_lines, leaf)
    if chain is None:
        return None
    boundary = max(
        (i for i, line in enumerate(chain) if line.kind == b"compact_boundary"), default=0
    )
    wanted = [*_run_state(chain[:boundary]), *chain[boundary:]]
    records: list[ChainRecord] = []
    for line in wanted:
        record = _parse(data, line)
        if record is None or isinstance(record, MetaRecord | ProgressRecord):
            return None
        records.append(record)
    meta: MetaRecord | None = None
    metas = [line for line in lines if line.type == b"meta"]
    if metas:
        parsed = _parse(data, metas[-1])
        if not isinstance(parsed, MetaRecord):
            return None
        meta = parsed
    progress: list[ProgressRecord] = []
    tool_lines: list[_Line] = []
    for line in lines:
        if line.type != b"progress":
            continue
        if line.kind in TOOL_EVENTS:
            tool_lines.append(line)
            continue
        parsed = _parse(data, line)
        if not isinstance(parsed, ProgressRecord):
            return None
        progress.append(parsed)
    turns: dict[bytes, bytes | None] = {}
    for line in chain:
        if line.turn and line.turn not in turns:
            turns[line.turn] = line.parent
    turn_parents = [(t.decode(), p.decode() if p else None) for t, p in turns.items()]
    loaded = LoadedTranscript(records, meta, progress, None, len(data))
    users = sum(1 for line in chain if line.type == b"user")
    return LiveRead(loaded, records, users, turn_parents, data, tool_lines)


def _index(data: bytes) -> list[_Line] | None:
    """Every line's facts, or None when a line is not in the shape this Tether writes (or
    the last one is torn)."""
    if data and not data.endswith(b"\n"):
        return None  # a torn last line: the whole read sets it aside
    out: list[_Line] = []
    position = 0
    match, kind_of = PREFIX.match, _KIND.search
    for line in data.split(b"\n")[:-1]:
        found = match(line)
        if found is None:
            return None  # a line of another shape (or a blank one)
        uuid, parent, turn, kind = found.groups()
        tail = None
        if kind in (b"system", b"progress"):
            last = kind_of(line, max(found.end(), len(line) - 64))
            if last is None:
                return None
            tail = last[1]
        out.append(_Line(position, uuid, parent, turn, kind, tail))
        position += len(line) + 1
    return out


def _walk(lines: list[_Line], leaf: str | None) -> list[_Line] | None:
    """The chain root..leaf as ``chain.build_chain`` takes it, or None where it would repair."""
    by_uuid = {line.uuid: line for line in lines}
    if len(by_uuid) < len(lines):
        return None
    for line in lines:
        parent = by_uuid.get(line.parent) if line.parent else None
        if parent is not None and parent.start >= line.start:
            return None  # a parent written after its child (a loop): the whole read repairs
    has_children = {line.parent for line in lines if line.parent}
    cursor = leaf.encode() if leaf is not None else None
    if cursor is None or cursor not in by_uuid:
        cursor = next(
            (line.uuid for line in reversed(lines) if line.uuid not in has_children), None
        )
        if cursor is None:
            return None
    results_of: dict[bytes, int] = {}
    for line in lines:
        if line.type == b"tool_result" and line.parent:
            results_of[line.parent] = results_of.get(line.parent, 0) + 1
    chain: list[_Line] = []
    seen: set[bytes] = set()
    while cursor is not None:
        line = by_uuid.get(cursor)
        if line is None or cursor in seen:
            return None  # a lost parent or a loop: the whole read repairs it
        if line.type == b"assistant" and results_of.get(cursor, 0) > 1:
            return None  # forked tool results: the whole read stitches them
        seen.add(cursor)
        chain.append(line)
        cursor = line.parent
    chain.reverse()
    return chain


def _run_state(before: list[_Line]) -> list[_Line]:
    """The newest mode, plan and files records before the boundary, in chain order."""
    newest: dict[bytes, _Line] = {}
    for line in before:
        if line.type == b"system" and line.kind in RUN_STATE:
            newest[line.kind] = line
    return [line for line in before if line.kind is not None and newest.get(line.kind) is line]


def _parse(data: bytes, line: _Line) -> ChainRecord | MetaRecord | ProgressRecord | None:
    try:
        return load_record(data[line.start : data.find(b"\n", line.start)])
    except (ValidationError, ValueError, UnicodeDecodeError):
        return None
