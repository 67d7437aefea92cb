"""Rewinding a conversation: the files a turn changed go back (``checkpoints``), and the
conversation continues from the point before that turn, rebuilt from the transcript so it
is right whatever happened since (a compaction included)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from tether.engine.engine import QueryEngine
from tether.errors import SessionError
from tether.session.checkpoints import Restored
from tether.transcript.payloads import ModeData, RewindData
from tether.transcript.records import SystemRecord
from tether.transcript.resume import conversation_at


@dataclass
class Rewound:
    outcomes: list[Restored] = field(default_factory=lambda: list[Restored]())

    @property
    def restored(self) -> list[Path]:
        """Files changed back to what they were."""
        return [o.path for o in self.outcomes if o.changed]

    @property
    def failed(self) -> list[Restored]:
        """Files that could not be put back, each with the reason."""
        return [o for o in self.outcomes if o.problem is not None]


async def rewind_conversation(
    engine: QueryEngine, turn_id: str, parent_uuid: str | None, result: Rewound
) -> None:
    """Cut the conversation back to ``parent_uuid`` (the chain head before ``turn_id``);
    the next record continues a new branch from there."""
    writer = engine.transcript
    if writer is None:
        raise SessionError("this session keeps no transcript, so it cannot be rewound")
    await writer.flush()
    messages = await asyncio.to_thread(conversation_at, writer.path, parent_uuid)
    engine.replace_conversation(messages, parent_uuid)
    engine.record(
        SystemRecord(
            session_id=engine.session_id,
            data=RewindData(
                turn_id=turn_id,
                restored=[p.as_uri() for p in result.restored],
                failed={o.path.as_uri(): o.problem for o in result.failed},
            ),
        )
    )
    # The mode is the user's setting, not part of the conversation: the session stays in
    # the mode it is in now, and a resume must find it so (a mode change recorded inside
    # the rewound turns is off the new branch).
    engine.record(SystemRecord(session_id=engine.session_id, data=ModeData(mode=engine.state.mode)))
