"""A session's conversation read back from its transcript, as the updates a client would
have seen (``tether/loadSession``, ACP ``session/load``), with the turns rewinds took off
it, each where it was."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.protocol.updates import Notice, SessionUpdate
from tether.transcript.chain import build_chain
from tether.transcript.load import read_transcript
from tether.transcript.records import ChainRecord
from tether.transcript.replay import Describe, history_updates
from tether.transcript.rewound import rewound_branches

Updates = list[tuple[str, SessionUpdate]]
"""``(turnId, update)`` pairs in conversation order."""


@dataclass(frozen=True)
class RewoundTurns:
    """Turns one rewind took off the conversation: they came right before the update at
    ``at`` of the history (that many updates came before them)."""

    at: int
    turn_id: str
    """The first turn rewound (the rewind went back to before it)."""
    restored: list[str]
    """The files put back, as URIs."""
    updates: Updates


@dataclass(frozen=True)
class History:
    updates: Updates
    rewound: list[RewoundTurns]


def read_history(
    path: Path,
    leaf: str | None,
    describe: Describe,
    context_window: int,
    repaired: Sequence[str] = (),
) -> History:
    """The conversation that ends at ``leaf`` in the transcript at ``path``; what loading
    repaired or this reading had to mend ends it as warnings (once each)."""
    loaded = read_transcript(path, skip_damaged=True)
    chain, repairs = build_chain(loaded.records, leaf)
    branches = {b.rewind.uuid: b for b in rewound_branches(loaded.records, chain)}
    updates: Updates = []
    rewound: list[RewoundTurns] = []
    piece: list[ChainRecord] = []
    for record in chain:
        branch = branches.get(record.uuid)
        if branch is not None:
            # A rewind comes between turns: each piece's usage ends with its own turns.
            updates += history_updates(piece, describe, context_window)
            piece = []
            rewound.append(
                RewoundTurns(
                    at=len(updates),
                    turn_id=branch.data.turn_id,
                    restored=list(branch.data.restored),
                    updates=history_updates(branch.records, describe, context_window),
                )
            )
        piece.append(record)
    updates += history_updates(piece, describe, context_window)
    notes = dict.fromkeys([*repaired, *loaded.skipped, *repairs])
    updates += [
        ("", Notice(level="warning", message=f"resuming repaired the transcript: {note}"))
        for note in notes
    ]
    return History(updates, rewound)
