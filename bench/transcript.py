"""Transcript store numbers:

- append throughput of the session writer (records/s, queued and flushed in batches)
- resume time for a session of 100,000 records (target < 1.5 s)
- resume of a compacted session of 100,000 records whose live part (after its last
  compaction boundary) is 1,000 records, against a file of only those 1,000 (the ratio
  shows resume reads the live part first), and the same file read whole
- listing 1,000 session files, reading only their tails (target < 150 ms)

    python bench/transcript.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms

from tether.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from tether.transcript.chain import build_chain
from tether.transcript.load import read_transcript
from tether.transcript.payloads import CompactBoundaryData
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    ChainRecord,
    MetaRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
    dump_record,
)
from tether.transcript.resume import live_conversation, resume
from tether.transcript.store import TranscriptStore
from tether.transcript.writer import TranscriptWriter


def conversation(n: int, session: str) -> list[ChainRecord]:
    records: list[ChainRecord] = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            records.append(
                UserRecord(
                    session_id=session, message=user_text(f"step {i}: continue with the next file")
                )
            )
        elif kind == 1:
            use = ToolUseBlock(id=f"toolu_{i}", name="Read", input={"file_path": f"src/m{i}.py"})
            text = TextBlock(text="Reading the next module to see how it is wired.")
            records.append(
                AssistantRecord(
                    session_id=session, message=Message(role="assistant", content=[text, use])
                )
            )
        else:
            result = ToolResultBlock(
                tool_use_id=f"toolu_{i - 1}",
                content=[TextBlock(text="1\tdef f():\n2\t    return 1\n" * 8)],
            )
            records.append(
                ToolResultRecord(session_id=session, message=Message(role="user", content=[result]))
            )
    return records


async def append_throughput(tmp: Path, n: int = 50_000) -> float:
    records = conversation(n, "append")
    writer = TranscriptWriter(tmp / "append.jsonl", "append")
    writer.open()
    started = time.perf_counter()
    for i, record in enumerate(records):
        writer.append(record)
        if i % 500 == 0:
            await asyncio.sleep(0)  # let the background flusher run, as in a live session
    await writer.close()
    return n / (time.perf_counter() - started)


def write_session(
    path: Path, n: int, session: str, title: str, *, compacted_before: int | None = None
) -> None:
    """``compacted_before``: a compaction boundary and its summary before the last that
    many records (only those are written after it when ``n`` equals it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    parent = None
    records = conversation(n, session)
    if compacted_before is not None:
        at = len(records) - compacted_before
        boundary = SystemRecord(session_id=session, data=CompactBoundaryData(trigger="auto"))
        summary = AttachmentRecord(
            session_id=session,
            message=user_text("<summary>Earlier: read many modules.</summary>"),
            attachment="compact_summary",
        )
        records[at:at] = [boundary, summary]
    with path.open("w") as f:
        for record in records:
            record.parent_uuid = parent
            parent = record.uuid
            f.write(dump_record(record) + "\n")
        f.write(dump_record(MetaRecord(session_id=session, title=title, turns=n // 3)) + "\n")


def resume_time(tmp: Path, n: int = 100_000, runs: int = 3) -> tuple[float, float, int]:
    """Best wall time and its CPU time over a few runs (the machine may be shared)."""
    path = tmp / "big.jsonl"
    write_session(path, n, "big", "a long session")
    best = (float("inf"), 0.0, 0)
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        resumed = resume(path, "big")
        sample = (time.perf_counter() - wall, time.process_time() - cpu, len(resumed.messages))
        best = min(best, sample)
    return best


def compacted_resume_time(tmp: Path, n: int = 100_000, live: int = 999) -> tuple[float, ...]:
    """Best times: the compacted big session, a file of only its live part, and the big
    one read whole (the reading before the live part was read first)."""
    big, small = tmp / "compacted.jsonl", tmp / "live-only.jsonl"
    write_session(big, n, "compacted", "compacted", compacted_before=live)
    write_session(small, live, "compacted", "compacted", compacted_before=live)

    def best(path: Path, whole: bool = False) -> tuple[float, int]:
        times: list[float] = []
        messages = 0
        for _ in range(5):
            started = time.perf_counter()
            if whole:
                loaded = read_transcript(path)
                messages = len(live_conversation(build_chain(loaded.records)[0])[0])
            else:
                messages = len(resume(path, "compacted").messages)
            times.append(time.perf_counter() - started)
        return min(times), messages

    (big_s, big_n), (small_s, small_n) = best(big), best(small)
    whole_s, whole_n = best(big, whole=True)
    assert big_n == small_n == whole_n, (big_n, small_n, whole_n)
    return big_s, small_s, whole_s, big_n


def listing_time(tmp: Path, sessions: int = 1000) -> tuple[float, int]:
    store = TranscriptStore(tmp / "store")
    workspace = Path("/work/project")
    for i in range(sessions):
        write_session(
            store.session_path(workspace, f"session-{i:04d}"), 30, f"session-{i:04d}", f"title {i}"
        )
    best = float("inf")
    count = 0
    for _ in range(3):
        started = time.perf_counter()
        count = len(store.list_sessions(workspace))
        best = min(best, time.perf_counter() - started)
    return best, count


async def main() -> None:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        rate = await append_throughput(tmp)
        print(f"append throughput: {rate:,.0f} records/s")
        seconds, cpu, messages = resume_time(tmp)
        print(
            f"resume of a 100,000-record session: {ms(seconds)} wall, {ms(cpu)} CPU "
            f"({messages} messages)  [target < 1.5 s]"
        )
        big, small, whole, messages = compacted_resume_time(tmp)
        print(
            f"resume of a compacted 100,000-record session ({messages} live messages): "
            f"{ms(big)}; a file of only its live part: {ms(small)} ({big / small:.2f}x); "
            f"the same session read whole: {ms(whole)} ({whole / small:.1f}x)"
        )
        seconds, count = listing_time(tmp)
        print(f"listSessions over {count} session files: {ms(seconds)}  [target < 150 ms]")


if __name__ == "__main__":
    asyncio.run(main())
