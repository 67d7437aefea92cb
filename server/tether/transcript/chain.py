"""Rebuild the conversation chain from indexed records.

Take the newest leaf (or a given one) and walk ``parentUuid`` to the root. Three repairs:
a record whose parent is missing re-attaches to its nearest live ancestor (the chain record
before it in the file); so does a record whose parent comes at or after it in the file (a
writer appends a parent before its children, so such a link is damage, and it is the link
that closes any loop: the chain is the longest one the file supports, never a loop cut
short silently); and tool results that forked the chain (each parallel result chained to
the same assistant message, as some writers do) are stitched back into one message after
that assistant message.
"""

from __future__ import annotations

from tether.core.messages import Message, ToolResultBlock
from tether.transcript.records import AssistantRecord, ChainRecord, ToolResultRecord


def build_chain(
    records: list[ChainRecord], leaf: str | None = None
) -> tuple[list[ChainRecord], list[str]]:
    """The chain from the root to ``leaf`` (default: the newest leaf), and repair notes."""
    notes: list[str] = []
    if not records:
        return [], notes
    by_uuid = {r.uuid: r for r in records}
    position = {r.uuid: i for i, r in enumerate(records)}
    link = {r.uuid: _valid_parent(r, position) for r in records}
    parent_links = [p for p in link.values() if p]
    parents = set(parent_links)
    forked = len(parents) < len(parent_links)
    if leaf is None or leaf not in by_uuid:
        leaf = next((r.uuid for r in reversed(records) if r.uuid not in parents), records[-1].uuid)
    chain: list[ChainRecord] = []
    seen: set[str] = set()
    cursor: str | None = leaf
    while cursor is not None and cursor not in seen:
        record = by_uuid[cursor]
        seen.add(cursor)
        chain.append(record)
        parent = link[cursor]
        if record.parent_uuid is not None and parent is None:
            later = record.parent_uuid in position
            notes.append(
                f"record {record.uuid[:8]} "
                + ("named a parent written after it (a loop)" if later else "lost its parent")
                + "; re-attached to the record before it"
            )
            index = position[cursor] - 1
            while index >= 0 and records[index].uuid in seen:
                index -= 1
            parent = records[index].uuid if index >= 0 else None
        cursor = parent
    chain.reverse()
    stitched = _stitch_forked_results(chain, records) if forked else 0
    if stitched:
        notes.append(f"{stitched} forked tool result(s) stitched back into the chain")
    return chain, notes


def _valid_parent(record: ChainRecord, position: dict[str, int]) -> str | None:
    """``record``'s parent when it is a record written before it, else None."""
    parent = record.parent_uuid
    if parent is None or parent not in position or position[parent] >= position[record.uuid]:
        return None
    return parent


def _stitch_forked_results(chain: list[ChainRecord], records: list[ChainRecord]) -> int:
    """Merge sibling tool-result records (children of one assistant record) into the one
    the chain went through, in the order of the assistant's tool uses."""
    in_chain = {r.uuid for r in chain}
    children: dict[str, list[ToolResultRecord]] = {}
    for record in records:
        if isinstance(record, ToolResultRecord) and record.parent_uuid:
            children.setdefault(record.parent_uuid, []).append(record)
    stitched = 0
    for i, record in enumerate(chain):
        if not isinstance(record, AssistantRecord) or i + 1 >= len(chain):
            continue
        follower = chain[i + 1]
        siblings = [s for s in children.get(record.uuid, []) if s.uuid not in in_chain]
        if not siblings or not isinstance(follower, ToolResultRecord):
            continue
        results: dict[str, ToolResultBlock] = {}
        for source in [follower, *siblings]:
            for block in source.message.tool_results:
                results.setdefault(block.tool_use_id, block)
        order = [u.id for u in record.message.tool_uses]
        merged = [results[i] for i in order if i in results]
        merged += [b for k, b in results.items() if k not in order]
        chain[i + 1] = follower.model_copy(
            update={"message": Message(role="user", content=list(merged))}
        )
        stitched += len(siblings)
    return stitched
