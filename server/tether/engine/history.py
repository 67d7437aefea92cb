"""The conversation and its transcript: every change to the messages is recorded.

``History`` owns the message list the model sees and the transcript writer that keeps it
on disk; the turn loop, the compactor and the session core change the conversation only
through it, so the file and the list cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tether.core.messages import INTERRUPTED_TOOL_RESULT, Message, ToolResultBlock, tool_result
from tether.engine.transitions import Transition
from tether.orchestration.pipeline import ToolOutcome
from tether.protocol.content import ContentBlock, ToolContent
from tether.protocol.updates import ModeChange, Plan, RejectedBy, SessionUpdate, Usage
from tether.providers.base import Completed
from tether.transcript.payloads import (
    AttachmentKind,
    FilesData,
    ModeData,
    PlanData,
    TransitionData,
    TurnEndData,
)
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    MetaRecord,
    Record,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
)
from tether.transcript.writer import TranscriptWriter

MAX_DISPLAY_CHARS = 200_000
"""Display content larger than this (a new file's diff holds the whole file) is not kept in
the transcript."""


def _text_chars(content: ToolContent) -> int:
    """The characters of text a display item holds, counted without copying them (its
    repr would cost a pass over a megabyte on the event loop)."""
    return sum(len(v) for v in vars(content).values() if isinstance(v, str))


def interrupted_result(tool_use_id: str) -> ToolResultBlock:
    """The answer to a tool call that never finished (a cancel, a crash)."""
    return tool_result(tool_use_id, INTERRUPTED_TOOL_RESULT, is_error=True)


class History:
    def __init__(
        self,
        session_id: str,
        messages: Sequence[Message] = (),
        transcript: TranscriptWriter | None = None,
        *,
        on_reset: Callable[[], None] = lambda: None,
    ) -> None:
        self.session_id = session_id
        self.messages: list[Message] = list(messages)
        self.transcript = transcript
        self._on_reset = on_reset
        """Told when the conversation is replaced (compaction, rewind): what was attached
        to the old one (recalled memory) may be attached again."""

    # -- records ----------------------------------------------------------------------

    def record(self, record: Record) -> None:
        if self.transcript is not None:
            self.transcript.append(record)

    async def record_durable(self, record: Record) -> None:
        if self.transcript is not None:
            await self.transcript.append_durable(record)

    async def flush(self) -> None:
        if self.transcript is not None:
            await self.transcript.flush()

    # -- messages ---------------------------------------------------------------------

    async def append_user(
        self,
        turn_id: str,
        message: Message,
        content: Sequence[ContentBlock],
        *,
        durable: bool = False,
    ) -> None:
        """A prompt; ``content`` is what the editor showed. A turn's own prompt is on disk
        (``durable``) before the model is called."""
        record = UserRecord(
            session_id=self.session_id, turn_id=turn_id, message=message, content=list(content)
        )
        if durable:
            await self.record_durable(record)
        else:
            self.record(record)
        self.messages.append(message)

    def append_assistant(
        self, turn_id: str, message: Message, model: str, completed: Completed | None = None
    ) -> None:
        self.messages.append(message)
        usage = None
        if completed is not None:
            u = completed.usage
            usage = Usage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_read_tokens=u.cache_read_tokens,
                cache_creation_tokens=u.cache_creation_tokens,
            )
        self.record(
            AssistantRecord(
                session_id=self.session_id,
                turn_id=turn_id,
                message=message,
                model=model,
                stop_reason=completed.stop_reason if completed else None,
                usage=usage,
            )
        )

    def append_tool_results(
        self, turn_id: str, assistant: Message, outcomes: list[ToolOutcome]
    ) -> None:
        by_id = {o.block.tool_use_id: o.block for o in outcomes}
        blocks = [by_id.get(u.id) or interrupted_result(u.id) for u in assistant.tool_uses]
        display = {
            o.block.tool_use_id: [c.to_wire() for c in o.display]
            for o in outcomes
            if (o.display or o.rejected)
            and sum(_text_chars(c) for c in o.display) <= MAX_DISPLAY_CHARS
        }
        rejected: dict[str, RejectedBy] = {}
        for o in outcomes:
            if o.rejected is not None:
                rejected[o.block.tool_use_id] = o.rejected
        self.append_tool_result_blocks(turn_id, blocks, display or None, rejected or None)

    def append_tool_result_blocks(
        self,
        turn_id: str,
        blocks: list[ToolResultBlock],
        display: dict[str, list[dict[str, Any]]] | None = None,
        rejected: dict[str, RejectedBy] | None = None,
    ) -> None:
        message = Message(role="user", content=list(blocks))
        self.messages.append(message)
        self.record(
            ToolResultRecord(
                session_id=self.session_id,
                turn_id=turn_id,
                message=message,
                display=display,
                rejected=rejected,
            )
        )

    def append_meta(self, turn_id: str | None, message: Message, kind: AttachmentKind) -> None:
        """A message for the model that editors do not show (memory, notifications...)."""
        self.messages.append(message)
        self.record(
            AttachmentRecord(
                session_id=self.session_id, turn_id=turn_id, message=message, attachment=kind
            )
        )

    def replace(self, messages: Sequence[Message]) -> None:
        """The conversation starts over from ``messages`` (a compaction's summary and what
        it kept); the caller records the boundary."""
        self.messages[:] = messages
        self._on_reset()

    def rewind(self, messages: Sequence[Message], last_uuid: str | None) -> None:
        """Continue from an earlier point: these messages, and the transcript branching off
        after ``last_uuid``."""
        self.messages[:] = messages
        if self.transcript is not None:
            self.transcript.last_uuid = last_uuid
        self._on_reset()

    # -- system records ---------------------------------------------------------------

    def record_transition(self, turn_id: str, step: Transition) -> None:
        if step.kind != "next_turn":
            self.record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=turn_id,
                    data=TransitionData(kind=step.kind),
                )
            )

    def record_state(self, turn_id: str | None, update: SessionUpdate) -> None:
        """Every mode change (a front door's, or a tool's like ExitPlanMode) and todo plan
        is on record, so a resumed session is in the state it was left in."""
        data: ModeData | PlanData | None = None
        if isinstance(update, ModeChange):
            data = ModeData(mode=update.mode)
        elif isinstance(update, Plan):
            data = PlanData(entries=list(update.entries))
        if data is not None:
            self.record(SystemRecord(session_id=self.session_id, turn_id=turn_id, data=data))

    def record_turn_end(
        self,
        turn_id: str,
        reason: str,
        message: str,
        files: dict[str, dict[str, object]] | None,
        meta: MetaRecord,
    ) -> None:
        """The end of a turn, the files read so far when they changed, and the tail
        metadata."""
        self.record(
            SystemRecord(
                session_id=self.session_id,
                turn_id=turn_id,
                data=TurnEndData(reason=reason, message=message),
            )
        )
        if files is not None:
            self.record(
                SystemRecord(
                    session_id=self.session_id, turn_id=turn_id, data=FilesData(files=files)
                )
            )
        self.record(meta)
