"""The change set on the wire: hunks with ranges in the negotiated position encoding, the
outcome of keeping and undoing them, and the code actions on a changed range for editors
without a plugin ("Tether: keep this change", "Tether: undo this change", "… all in this
file"), which carry the ``tether.keepChanges`` / ``tether.undoChanges`` commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from tether.lsp.actions import KIND_REVIEW, ReviewAction
from tether.lsp.textedits import Encoding, units
from tether.session.change_model import FileListing, Located, Outcome
from tether.transcript.payloads import HunkState

KEEP = "tether.keepChanges"
UNDO = "tether.undoChanges"


def position(line: int, tail: str, encoding: Encoding) -> dict[str, int]:
    return {"line": line, "character": units(tail, encoding)}


def hunk_range(located: Located, encoding: Encoding) -> dict[str, Any] | None:
    """Whole lines ``[start, end)``; at the end of a file without a final line break the
    range ends in its last line (a position after it does not exist)."""
    if located.lines is None:
        return None
    start, end = located.lines
    if not located.tail:
        return {"start": position(start, "", encoding), "end": position(end, "", encoding)}
    last = position(end - 1, located.tail, encoding)
    return {"start": last if start == end else position(start, "", encoding), "end": last}


def hunk_to_wire(located: Located, encoding: Encoding) -> dict[str, Any]:
    hunk = located.hunk
    out: dict[str, Any] = {
        "hunkId": hunk.hunk_id,
        "turnId": hunk.turn_id,
        "state": hunk.state,
        "conflict": located.conflict,
        "oldText": "".join(hunk.block.old),
        "newText": "".join(hunk.block.new),
        "summary": hunk.summary,
    }
    where = hunk_range(located, encoding)
    if where is not None:
        out["range"] = where
    return out


def listing_to_wire(
    listings: list[FileListing], states: list[HunkState], encoding: Encoding
) -> dict[str, Any]:
    counts = {"pending": 0, "kept": 0, "undone": 0, "conflicts": 0}
    files: list[dict[str, Any]] = []
    not_tracked: list[dict[str, Any]] = []
    for listing in listings:
        uri = listing.path.as_uri()
        shown: list[dict[str, Any]] = []
        for located in listing.located:
            counts[located.hunk.state] += 1
            counts["conflicts"] += located.conflict
            if located.hunk.state in states:
                shown.append(hunk_to_wire(located, encoding))
        if shown:
            files.append({"uri": uri, "hunks": shown})
        for change in listing.untracked:
            reason = change.problem or "it cannot be reviewed"
            not_tracked.append({"uri": uri, "turnId": change.turn_id, "reason": reason})
    out: dict[str, Any] = {"files": files, "counts": counts}
    if not_tracked:
        out["notTracked"] = not_tracked
    return out


def outcome_to_wire(outcome: Outcome, done: str, not_done: str) -> dict[str, Any]:
    out: dict[str, Any] = {done: [h.hunk_id for h in outcome.done]}
    if outcome.refused:
        out[not_done] = [
            {
                "hunkId": r.hunk.hunk_id,
                "uri": r.hunk.path.as_uri(),
                "reason": r.reason,
                "conflict": r.conflict,
            }
            for r in outcome.refused
        ]
    if outcome.notes:
        out["notes"] = list(outcome.notes)
    return out


# -- code actions ---------------------------------------------------------------------------


def touches(located: Located, first: int, last: int) -> bool:
    """Whether a request on lines ``first..last`` (inclusive) is on the hunk's lines (or, for
    lines removed, on the line where they were)."""
    if located.lines is None:
        return False
    start, end = located.lines
    return start <= last and first < max(end, start + 1)


def review_actions(
    session_id: str,
    path: Path,
    located: list[Located],
    first: int,
    last: int,
) -> list[ReviewAction]:
    """(kind, command, why disabled) for the hunks of one session under a request's lines.
    A conflicting hunk (its lines changed since; where it is cannot be told) near them is a
    disabled action that says why nothing can be done to it."""
    uri = path.as_uri()
    conflicts: list[ReviewAction] = []
    for x in located:
        start, end = x.hunk.new_range
        if (
            x.conflict
            and x.hunk.state == "pending"
            and start <= last
            and first < max(end, start + 1)
        ):
            reason = f"its lines were changed after the turn made them ({x.hunk.summary})"
            title = "Tether: conflict: this change cannot be kept or undone"
            command = types.Command(title=title, command=UNDO, arguments=[])
            conflicts.append((KIND_REVIEW, command, reason))
    here = [x for x in located if touches(x, first, last) and x.hunk.state != "undone"]
    if not here:
        return conflicts
    found: list[ReviewAction] = list(conflicts)
    pending = [x.hunk.hunk_id for x in here if x.hunk.state == "pending"]
    ids = [x.hunk.hunk_id for x in here]
    which = "this change" if len(ids) == 1 else f"these {len(ids)} changes"
    if pending:
        args = [{"uri": uri, "sessionId": session_id, "hunkIds": pending}]
        title = f"Tether: keep {which}" if len(pending) == len(ids) else "Tether: keep changes"
        found.append((KIND_REVIEW, types.Command(title=title, command=KEEP, arguments=args), None))
    args = [{"uri": uri, "sessionId": session_id, "hunkIds": ids}]
    found.append(
        (
            KIND_REVIEW,
            types.Command(title=f"Tether: undo {which}", command=UNDO, arguments=args),
            None,
        )
    )
    if sum(1 for x in located if x.hunk.state == "pending") > len(pending):
        args = [{"uri": uri, "sessionId": session_id}]
        for verb, name in (("keep", KEEP), ("undo", UNDO)):
            title = f"Tether: {verb} all changes in this file"
            found.append(
                (KIND_REVIEW, types.Command(title=title, command=name, arguments=args), None)
            )
    return found
