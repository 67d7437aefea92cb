"""Reading a transcript file: every record indexed, damage located.

A partial last line is a torn write (the process died mid-append): it is reported, not
fatal. A line that cannot be read (not JSON, NUL bytes, nested too deep, not a record)
whose intact prefix says it is a ``progress`` or ``meta`` record is skipped with a note: no
conversation runs through it. A bad line anywhere else is damage: loading stops with an
error naming the line, and ``recover=True`` loads only what comes before it (the last good
point; ``session.py`` keeps the rest in a file of its own and says how much that is).
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tether.core.files import read_regular
from tether.core.json_input import JsonTooDeepError
from tether.errors import SessionError
from tether.transcript.prefix import OUTSIDE_CHAIN, line_type
from tether.transcript.records import ChainRecord, MetaRecord, ProgressRecord, load_record
from tether.warmup import one_shot


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
    skipped: list[str] = field(default_factory=lambda: list[str]())
    """Notes on unreadable lines left out that no conversation runs through."""
    damaged: Damage | None = None
    """With ``recover``: the damaged line where reading stopped."""


@dataclass(frozen=True)
class Damage:
    """The first line of the conversation that could not be read."""

    line: int
    reason: str


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
    Only in a one-shot run (``warmup.import_for_run``): one that lives on (the warm daemon,
    an editor's server) would never collect again what is garbage at that moment, other
    sessions' included."""
    if records > FREEZE_AFTER and one_shot():
        gc.freeze()


def read_transcript(
    path: Path, *, recover: bool = False, skip_damaged: bool = False
) -> LoadedTranscript:
    """``skip_damaged``: for showing a history, leave out every line that cannot be read,
    each with a note, instead of stopping there."""
    with paused_gc():
        return _read(path, recover, skip_damaged)


def _read(path: Path, recover: bool, skip_damaged: bool = False) -> LoadedTranscript:
    data = read_regular(path)
    records: list[ChainRecord] = []
    progress: list[ProgressRecord] = []
    meta: MetaRecord | None = None
    torn: bytes | None = None
    skipped: list[str] = []
    damage: Damage | None = None
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
                reason = why_unreadable(line, e)
                kind = line_type(line)
                if kind is not None and kind in OUTSIDE_CHAIN:
                    skipped.append(
                        f"line {number} ({kind.decode()} record) could not be read ({reason}) "
                        "and was left out; no part of the conversation depends on it"
                    )
                    position = good = next_position
                    continue
                if skip_damaged:
                    skipped.append(f"line {number} could not be read ({reason}) and is not shown")
                    position = good = next_position
                    continue
                if recover:
                    damage = Damage(number, reason)
                    break
                raise TranscriptDamagedError(path, number, number - 1, reason) from None
            if isinstance(record, MetaRecord):
                meta = record
            elif isinstance(record, ProgressRecord):
                progress.append(record)
            else:
                records.append(record)
        position = next_position
        good = position
    return LoadedTranscript(records, meta, progress, torn, good, skipped, damage)


def why_unreadable(line: bytes, error: Exception) -> str:
    """What is wrong with a line, in words."""
    if b"\x00" in line:
        return "it holds NUL bytes, as a crash or a disk fault leaves"
    if isinstance(error, JsonTooDeepError):
        return str(error)
    if isinstance(error, UnicodeDecodeError):
        return "it is not UTF-8"
    if isinstance(error, ValidationError):
        return "it is not a record of this format"
    return error.__class__.__name__
