"""What the change set costs: at a turn's end, when hunks are derived, and when they are found
again in a file that changed since.

1. A turn's end (``ChangeSet.turn_ended``) for a turn that changed 20 files: it records the
   texts and derives nothing — against the same turn recording only its checkpoints.
2. Deriving a file's hunks (the line diff of its text before and after the turn), for files
   of 1,000 to 30,000 lines (about 1 MB) with 3 scattered edits and rewritten from end to
   end — against what the editor bridge computed for the same write (``minimal_edits``).
3. Finding the hunks again after a later turn changed another part of the file, and asking
   again about an unchanged file (a code action on every cursor move).
4. Listing one file's changes in a session of 10 and of 500 turns (each changing another
   file): a request costs what it asks about, not the session.

    python bench/changes.py [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms, summary

from tether.editor.disk import DiskEditor
from tether.lsp.textedits import minimal_edits
from tether.session.changes import ChangeSet
from tether.session.checkpoints import Checkpoints, TurnCheckpoint
from tether.transcript.records import ProgressRecord

LINE = "    value_{i} = compute(request, {i})  # a line of an ordinary module, about 60 bytes\n"


def text_of(lines: int) -> str:
    return "".join(LINE.format(i=i) for i in range(lines))


def scattered_edits(text: str) -> str:
    lines = text.splitlines(keepends=True)
    for at in (len(lines) // 5, len(lines) // 2, len(lines) * 4 // 5):
        lines[at] = lines[at].replace("compute", "recompute")
    return "".join(lines)


def timed(runs: int, work: Callable[[], object]) -> list[float]:
    samples: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return samples


def median(samples: list[float]) -> float:
    return sorted(samples)[len(samples) // 2]


def change_set(checkpoints: Checkpoints) -> ChangeSet:
    records: list[ProgressRecord] = []
    return ChangeSet(checkpoints, "bench", records.append, lambda _update: None)


def turn_with(
    checkpoints: Checkpoints, turn_id: str, files: dict[Path, tuple[str, str]]
) -> TurnCheckpoint:
    checkpoints.begin(turn_id, None)
    turn = checkpoints.current
    assert turn is not None
    for path, (before, after) in files.items():
        turn.before[path] = before
        turn.after[path] = after
    return turn


async def turn_end(runs: int) -> None:
    before = text_of(2_000)
    files = {Path(f"/ws/src/m{n}.py"): (before, scattered_edits(before)) for n in range(20)}
    samples: list[float] = []
    for n in range(runs):
        checkpoints = Checkpoints()
        changes = change_set(checkpoints)
        turn = turn_with(checkpoints, f"t{n}", files)
        started = time.perf_counter()
        await changes.turn_ended(turn.turn_id)
        samples.append(time.perf_counter() - started)
    print(f"1. turn end, 20 files of 2,000 lines changed: {summary(samples)}")


def derive_once(before: str, after: str) -> None:
    """A turn that changed one file ends, and its hunks are asked for."""
    checkpoints = Checkpoints()
    changes = change_set(checkpoints)
    turn = turn_with(checkpoints, "t", {Path("/ws/m.py"): (before, after)})
    asyncio.run(changes.turn_ended(turn.turn_id))
    changes.files("t")


def derive(runs: int) -> None:
    print("2. deriving a file's hunks (against the bridge's minimal_edits for the same write)")
    for lines in (1_000, 10_000, 30_000):
        before = text_of(lines)
        for label, after in (
            ("3 edits", scattered_edits(before)),
            ("rewritten", before.replace("compute", "evaluate")),
        ):
            if label == "rewritten" and lines > 10_000:
                continue  # a whole-file rewrite of 1 MB is a model writing 1 MB: not a case
            derived = median(timed(runs, partial(derive_once, before, after)))
            edits = median(timed(runs, partial(minimal_edits, before, after)))
            print(
                f"   {lines:>6,} lines, {label:<9}: derive {ms(derived)}, "
                f"minimal_edits {ms(edits)}, ratio {derived / edits:.2f}"
            )


async def locate(runs: int, root: Path) -> None:
    path = root / "m.py"
    before = text_of(10_000)
    after = scattered_edits(before)
    later = "# a header a later turn added\n" + after
    path.write_text(later)
    checkpoints = Checkpoints()
    changes = change_set(checkpoints)
    await changes.turn_ended(turn_with(checkpoints, "t", {path: (before, after)}).turn_id)
    editor = DiskEditor()
    samples: list[float] = []
    for n in range(runs):
        path.write_text(later + f"# typed {n}\n")  # a new text every time: nothing cached
        started = time.perf_counter()
        await changes.locate(editor, path)
        samples.append(time.perf_counter() - started)
    again: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        await changes.locate(editor, path)
        again.append(time.perf_counter() - started)
    read = timed(runs, path.read_text)
    print(f"3. finding 3 hunks in 10,000 lines changed since: {summary(samples)}")
    print(f"   the same file unchanged (cached diff):        {summary(again)}")
    print(f"   reading the file alone:                        {summary(read)}")


async def listing(runs: int, root: Path) -> None:
    editor = DiskEditor()
    results: dict[int, float] = {}
    for turns in (10, 500):
        checkpoints = Checkpoints()
        changes = change_set(checkpoints)
        for n in range(turns):
            path = root / f"f{n}.py"
            before = text_of(200)
            path.write_text(scattered_edits(before))
            turn = turn_with(checkpoints, f"t{n}", {path: (before, scattered_edits(before))})
            await changes.turn_ended(turn.turn_id)
        asked = root / "f5.py"
        samples: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            await changes.listing(editor, path=asked)
            samples.append(time.perf_counter() - started)
        results[turns] = median(samples)
        print(f"4. one file's changes in a session of {turns:>3} turns: {summary(samples)}")
    print(f"   ratio 500 / 10 turns: {results[500] / results[10]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(turn_end(args.runs))
    derive(max(3, args.runs // 4))
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(locate(args.runs, Path(tmp)))
        asyncio.run(listing(args.runs, Path(tmp)))


if __name__ == "__main__":
    main()
