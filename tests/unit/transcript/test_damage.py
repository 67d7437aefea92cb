"""Damage a transcript can carry, read by every path (the live part, the whole file, the
history): NUL bytes, lines nested past the parser's depth, parent links that loop, files
and FIFOs where session files belong. Each is mended or refused with a note naming it,
never a crash and never a conversation cut short in silence."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tether.core.messages import Message, TextBlock, ToolUseBlock, user_text
from tether.errors import SessionError
from tether.transcript.chain import build_chain
from tether.transcript.live import read_live
from tether.transcript.load import TranscriptDamagedError, read_transcript
from tether.transcript.payloads import ToolStartedData
from tether.transcript.records import (
    AssistantRecord,
    MetaRecord,
    ProgressRecord,
    UserRecord,
    dump_record,
    load_record,
)
from tether.transcript.resume import resume
from tether.transcript.session import open_for_resume
from tether.transcript.store import TranscriptStore, workspace_key

SID = "s1"


def conversation() -> list[UserRecord | AssistantRecord | ProgressRecord | MetaRecord]:
    out: list[UserRecord | AssistantRecord | ProgressRecord | MetaRecord] = []
    parent = None
    for turn in ("one", "two", "three"):
        user = UserRecord(session_id=SID, parent_uuid=parent, message=user_text(turn))
        use = ToolUseBlock(id=f"t-{turn}", name="Read", input={"file_path": "a"})
        said = AssistantRecord(
            session_id=SID,
            parent_uuid=user.uuid,
            message=Message(role="assistant", content=[TextBlock(text=f"re {turn}"), use]),
        )
        started = ProgressRecord(session_id=SID, data=ToolStartedData(tool_use_id=use.id))
        out += [user, said, started]
        parent = said.uuid
    out.append(MetaRecord(session_id=SID, title="t", turns=3))
    return out


def write(path: Path, records: list[object]) -> list[bytes]:
    lines = [dump_record(r).encode() for r in records]  # type: ignore[arg-type]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return lines


def said(messages: list[Message]) -> list[str]:
    return [b.text for m in messages for b in m.content if isinstance(b, TextBlock)]


FULL = ["one", "re one", "two", "re two", "three", "re three"]


def test_a_nul_byte_in_a_progress_line_is_skipped_by_every_reader(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = write(path, conversation())  # type: ignore[arg-type]
    lines[2] = lines[2].replace(b'"toolUseId"', b'"tool\x00UseId"')
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    assert read_live(path) is None  # the live read does not vouch for a file with NULs
    resumed = resume(path, SID)
    assert said(resumed.messages)[:6] == FULL
    (note,) = [n for n in resumed.repaired if "line 3" in n]
    assert "progress record" in note and "NUL" in note
    history = read_transcript(path, skip_damaged=True)
    assert history.skipped == [note]


def test_a_nul_byte_in_the_conversation_is_refused_then_set_aside_with_counts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    lines = write(path, conversation())  # type: ignore[arg-type]
    lines[3] = lines[3][:40] + b"\x00" + lines[3][40:]  # the second prompt
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    with pytest.raises(TranscriptDamagedError, match="line 4 is damaged") as e:
        resume(path, SID)
    assert "NUL" in str(e.value)


async def test_recovery_says_what_it_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = write(path, conversation())  # type: ignore[arg-type]
    lines[3] = b"\x00" * len(lines[3])  # a block of NULs, as a disk fault leaves
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    resumed, writer = await open_for_resume(path, SID, recover=True)
    try:
        assert said(resumed.messages)[:2] == ["one", "re one"]
        (note,) = [n for n in resumed.repaired if "set aside" in n]
        assert "line 4 could not be read" in note and "NUL" in note
        assert "7 line(s), with 1 readable prompt(s)" in note
        (aside,) = tmp_path.glob("s.jsonl.damaged-*")
        assert aside.read_bytes().count(b"\n") == 10  # the whole file is kept
    finally:
        await writer.close()


async def test_recovery_on_a_full_disk_leaves_the_file_untouched_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    lines = write(path, conversation())  # type: ignore[arg-type]
    lines[3] = b"\x00" * len(lines[3])
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    original = path.read_bytes()

    def full(_fd: int) -> None:  # the disk is full: what was written cannot be kept
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(SessionError, match=r"the disk is full \(\d+ bytes are needed") as e:
        await open_for_resume(path, SID, recover=True)
    assert "untouched" in str(e.value)
    assert path.read_bytes() == original  # nothing lost, nothing moved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # and no leftovers
    monkeypatch.undo()
    resumed, writer = await open_for_resume(path, SID, recover=True)  # space is back
    try:
        assert said(resumed.messages)[:2] == ["one", "re one"]
    finally:
        await writer.close()


def test_a_line_nested_too_deep_is_damage_and_what_tether_writes_reads_back(
    tmp_path: Path,
) -> None:
    deep: object = "x"
    for _ in range(240):  # within what pydantic writes, past what it parses
        deep = [deep]
    record = AssistantRecord(
        session_id=SID,
        message=Message(
            role="assistant", content=[ToolUseBlock(id="t", name="X", input={"v": deep})]
        ),
    )
    assert load_record(dump_record(record)).uuid == record.uuid
    path = tmp_path / "s.jsonl"
    lines = write(path, conversation())  # type: ignore[arg-type]
    lines[3] = lines[3][:-1] + b',"x":' + b"[" * 5000 + b"]" * 5000 + b"}"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    with pytest.raises(TranscriptDamagedError, match="nested more than 256 levels"):
        read_transcript(path)
    lines[2] = lines[2][:-1] + b',"x":' + b"[" * 5000 + b"]" * 5000 + b"}"
    lines[3] = dump_record(conversation()[3]).encode()  # type: ignore[arg-type]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    assert "nested more than 256 levels" in read_transcript(path).skipped[0]


@pytest.mark.parametrize("loop", ["two-records", "self", "root"])
def test_a_parent_loop_keeps_the_longest_chain_and_says_so(tmp_path: Path, loop: str) -> None:
    path = tmp_path / "s.jsonl"
    recs = conversation()
    chain = [r for r in recs if isinstance(r, UserRecord | AssistantRecord)]
    if loop == "two-records":
        chain[2].parent_uuid = chain[5].uuid  # "two" after the last answer: a loop
    elif loop == "self":
        chain[4].parent_uuid = chain[4].uuid
    else:
        chain[0].parent_uuid = chain[1].uuid
    write(path, recs)  # type: ignore[arg-type]
    for read in (lambda: resume(path, SID), lambda: resume(path, SID, recover=True)):
        resumed = read()
        assert said(resumed.messages)[:6] == FULL
        assert any("loop" in n for n in resumed.repaired), resumed.repaired
    records = read_transcript(path).records
    built, notes = build_chain(records)
    assert [r.uuid for r in built] == [r.uuid for r in chain]
    assert len(notes) == 1


def test_directories_and_fifos_named_like_sessions_are_passed_by(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    folder = store.root / workspace_key(tmp_path / "ws")
    folder.mkdir(parents=True)
    write(folder / "real.jsonl", conversation())  # type: ignore[arg-type]
    (folder / "dir.jsonl").mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    listed = store.list_sessions(tmp_path / "ws")
    assert [s.session_id for s in listed] == ["real"]
    assert [s.session_id for s in store.list_sessions()] == ["real"]
    assert store.find("dir") is None and store.find("pipe") is None
    assert store.find("real") == folder / "real.jsonl"


def test_history_reads_past_damage_it_names(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = write(path, conversation())  # type: ignore[arg-type]
    lines[4] = b"{not json"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    loaded = read_transcript(path, skip_damaged=True)
    assert loaded.skipped == ["line 5 could not be read (JSONDecodeError) and is not shown"]
    _chain, notes = build_chain(loaded.records)
    assert any("lost its parent" in n for n in notes)
    assert json.loads(lines[0])["type"] == "user"
