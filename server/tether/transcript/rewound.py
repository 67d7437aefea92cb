"""The turns a rewind took off the conversation, read back from the transcript.

A rewind continues the conversation from the record before the rewound turn; the records
of those turns stay in the file, on the branch the rewind left. The rewind's own record is
on the live branch, written right after the last record of the branch it left, so that
branch is the chain ending at the record written just before it, from the rewind's parent
on. Turns rewound inside a rewound branch (an earlier rewind on it) are part of what was
rewound, in their place.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.transcript.chain import build_chain
from tether.transcript.payloads import RewindData
from tether.transcript.records import ChainRecord, SystemRecord


@dataclass(frozen=True)
class RewoundBranch:
    """What one rewind on the live chain took off, oldest record first."""

    rewind: SystemRecord
    data: RewindData
    records: list[ChainRecord]


def rewound_branches(records: list[ChainRecord], chain: list[ChainRecord]) -> list[RewoundBranch]:
    """The branch each rewind record of ``chain`` left, in ``chain`` order. ``records`` are
    the transcript's records in file order."""
    position = {r.uuid: i for i, r in enumerate(records)}
    out: list[RewoundBranch] = []
    for record in chain:
        if isinstance(record, SystemRecord) and isinstance(record.data, RewindData):
            branch = _left_branch(records, position, record, set())
            out.append(RewoundBranch(record, record.data, branch))
    return out


def _left_branch(
    records: list[ChainRecord], position: dict[str, int], rewind: SystemRecord, seen: set[str]
) -> list[ChainRecord]:
    at = position.get(rewind.uuid)
    if at is None or at == 0 or rewind.uuid in seen:
        return []
    seen.add(rewind.uuid)
    head = records[at - 1]
    if head.uuid == rewind.parent_uuid:
        return []  # nothing was written since the point the rewind went back to
    old_chain, _notes = build_chain(records[:at], head.uuid)
    uuids = [r.uuid for r in old_chain]
    if rewind.parent_uuid is not None:
        if rewind.parent_uuid not in uuids:
            return []  # not a branch of this chain: nothing to show rather than a guess
        old_chain = old_chain[uuids.index(rewind.parent_uuid) + 1 :]
    out: list[ChainRecord] = []
    for record in old_chain:
        if isinstance(record, SystemRecord) and isinstance(record.data, RewindData):
            out += _left_branch(records, position, record, seen)
        out.append(record)
    return out
