"""A disk that refuses writes (``/dev/full``: every write fails with ENOSPC) loses nothing
silently: the flush raises naming the file and the cause, keeps what it could not write,
and a turn whose records are not saved ends with that error instead of ``completed``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.messages import user_text
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.errors import TranscriptWriteError
from tether.protocol.updates import TurnEnd
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry
from tether.transcript.records import AttachmentRecord
from tether.transcript.writer import TranscriptWriter

FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")


async def test_a_failed_flush_raises_and_keeps_the_records() -> None:
    writer = TranscriptWriter(FULL, "s1")
    writer.open()
    record = AttachmentRecord(session_id="s1", message=user_text("hello"), attachment="memory")
    writer.append(record)
    with pytest.raises(TranscriptWriteError, match=r"/dev/full: No space left on device"):
        await writer.flush()
    assert writer.pending  # nothing dropped: the next flush tries again
    with pytest.raises(TranscriptWriteError):
        await writer.flush()
    assert writer.pending
    await writer.close()  # logs; never raises at shutdown


async def test_a_background_flush_failure_is_reported_by_the_next_flush() -> None:
    writer = TranscriptWriter(FULL, "s1")
    writer.open()
    writer.append(AttachmentRecord(session_id="s1", message=user_text("x"), attachment="memory"))
    await writer._flush_later()  # the background flusher: it fails and keeps the error
    assert writer.failure is not None and writer.pending
    with pytest.raises(TranscriptWriteError, match="No space left"):
        await writer.flush()
    await writer.close()


async def test_a_turn_that_cannot_be_saved_ends_with_the_error(tmp_path: Path) -> None:
    writer = TranscriptWriter(FULL, "s1")
    writer.open()
    provider = ScriptedProvider(parse_script([[{"type": "text", "text": "hi"}]]))
    engine = QueryEngine(
        session_id="s1",
        cwd=tmp_path,
        provider=provider,
        tools=[],
        editor=DiskEditor(),
        transcript=writer,
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    updates = [u async for u in engine.submit("hello")]
    end = updates[-1]
    assert isinstance(end, TurnEnd)
    assert end.stop_reason == "error" and end.error is not None
    assert end.error.code == "transcript_error"
    assert "/dev/full" in end.error.message and "No space left on device" in end.error.message
    assert engine.last_result is not None
    assert engine.last_result.terminal.reason == "transcript_error"
    await engine.close()
