"""Reading a transcript file: every record indexed, damage located.

A partial last line is a torn write (the process died mid-append): it is reported, not
fatal. A bad line anywhere else is damage: loading stops with an error naming the line,
and ``recover=True`` loads only what comes before it (the last good point).
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from tether.errors import SessionError
from tether.transcript.records import ChainRecord, MetaRecord, ProgressRecord, load_record


class TranscriptDamagedError(SessionError):
    """A line in the middle of the file cannot be read."""

    def __init__(self, path: Path, line: int, last_good: int, reason: str) -> None:
        super().__init__(
            f"{path}: line {line} is damaged ({reason}). The session can be resumed from "
            f"the last good point (line {last_good}); what came after is set aside."
        )
        self.path = path
        self.line = line
        self.last_good = last_good


@dataclass
class LoadedTranscript:
    records: list[ChainRecord]
    """Conversation records in file order."""
    meta: MetaRecord | None
    progress: list[ProgressRecord]
    torn_tail: bytes | None = None
    good_bytes: int = 0
    """Length of the file up to the end of the last good line."""


FREEZE_AFTER = 20_000
"""Records loaded at once above which the new objects are moved out of the GC's view."""


@contextmanager
def paused_gc() -> Generator[None]:
    """Loading allocates hundreds of thousands of acyclic objects; the cyclic GC would scan
    them again and again (8x slower on a 100k-record session) with nothing to collect."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def keep_out_of_gc(records: int) -> None:
    """The objects of a big session live as long as the session: freeze them (keep them out
    of later collections) instead of paying a full collection now and at every later one.
    Only in a process that froze its heap at start, a one-shot run
    (``warmup.import_for_run``): one that lives on (the warm daemon, an editor's server)
    would never collect again what is garbage at that moment, other sessions' included."""
    if records > FREEZE_AFTER and gc.get_freeze_count() > 0:
        gc.freeze()


def read_transcript(path: Path, *, recover: bool = False) -> LoadedTranscript:
    with paused_gc():
        return _read(path, recover)


def _read(path: Path, recover: bool) -> LoadedTranscript:
    data = path.read_bytes()
    records: list[ChainRecord] = []
    progress: list[ProgressRecord] = []
    meta: MetaRecord | None = None
    torn: bytes | None = None
    position = 0
    number = 0
    good = 0
    while position < len(data):
        end = data.find(b"\n", position)
        if end < 0:
            torn = data[position:]  # no newline: the process died in the middle of a write
            break
        line = data[position:end]
        number += 1
        next_position = end + 1
        if line.strip():
            try:
                record = load_record(line)
            except (ValidationError, ValueError, UnicodeDecodeError) as e:
                if recover:
                    break
                reason = e.__class__.__name__
                raise TranscriptDamagedError(path, number, number - 1, reason) from None
            if isinstance(record, MetaRecord):
                meta = record
            elif isinstance(record, ProgressRecord):
                progress.append(record)
            else:
                records.append(record)
        position = next_position
        good = position
    return LoadedTranscript(records, meta, progress, torn, good)
