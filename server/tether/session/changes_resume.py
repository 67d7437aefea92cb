"""A resumed session's change set, from its transcript: the turns still on the conversation
(their checkpoints were rebuilt first), each changed file's text after its turn, and the
hunks' recorded states (applied as the hunks are derived)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tether.session.change_model import FileChange, TurnChanges
from tether.session.changes import ChangeSet
from tether.session.checkpoints import Checkpoints
from tether.transcript.payloads import ChangeAfterData, HunkStateData, UndoNotedData
from tether.transcript.resume import ResumedSession

LOST = "the session ended before this turn's changes were recorded"


def restore_changes(changes: ChangeSet, resumed: ResumedSession) -> None:
    """Fill ``changes`` from a resumed session's transcript."""
    progress = resumed.loaded.progress if resumed.loaded is not None else []
    restore(
        changes,
        [p.data for p in progress if isinstance(p.data, ChangeAfterData)],
        [p.data for p in progress if isinstance(p.data, HunkStateData)],
        [p.data for p in progress if isinstance(p.data, UndoNotedData)],
    )


def restore(
    changes: ChangeSet,
    afters: Sequence[ChangeAfterData],
    states: Sequence[HunkStateData],
    noted: Sequence[UndoNotedData],
) -> None:
    checkpoints = changes.checkpoints
    known = {t.turn_id for t in checkpoints.turns}
    recorded: dict[str, dict[Path, ChangeAfterData]] = {}
    for data in afters:
        if data.turn_id in known:
            recorded.setdefault(data.turn_id, {})[Path(data.path)] = data
    for index, checkpoint in enumerate(checkpoints.turns):
        files: dict[Path, FileChange] = {}
        ended = recorded.get(checkpoint.turn_id, {})
        for path, before in checkpoint.before.items():
            data = ended.get(path)
            shell = data is not None and data.shell
            if data is None:  # the turn's end was never recorded (a crash)
                after, problem = _after_fallback(checkpoints, index, path)
            else:
                after, problem = data.after, data.problem
            if before != after or problem is not None:
                files[path] = FileChange(
                    checkpoint.turn_id, path, before, after, problem, shell=shell
                )
        for path, reason in checkpoint.missing.items():
            files.setdefault(path, FileChange(checkpoint.turn_id, path, None, None, reason))
        if files:
            changes.turns[checkpoint.turn_id] = TurnChanges(checkpoint.turn_id, files)
    for data in states:
        if data.turn_id not in changes.turns:
            continue  # a rewound turn's
        for hunk_id in data.hunk_ids:
            changes.recorded_states[hunk_id] = (data.state, data.last_turn)
            if data.state == "undone":
                changes.unnoted[hunk_id] = None
            else:
                changes.unnoted.pop(hunk_id, None)
    for data in noted:
        for hunk_id in data.hunk_ids:
            changes.unnoted.pop(hunk_id, None)


def _after_fallback(
    checkpoints: Checkpoints, index: int, path: Path
) -> tuple[str | None, str | None]:
    """A turn whose end is not on record: the file as the next turn that changed it found
    it; without one, the file is not reviewable (what is on disk now may hold other
    changes)."""
    for later in checkpoints.turns[index + 1 :]:
        if path in later.before:
            return later.before[path], None
    return None, LOST
