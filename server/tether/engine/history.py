"""The conversation and its transcript: every change to ``messages`` is recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.context.compaction import boundary_records
from tether.core.messages import INTERRUPTED_TOOL_RESULT, Message, ToolResultBlock, tool_result
from tether.engine.transitions import Transition
from tether.engine.usage import UsageMeter
from tether.orchestration.pipeline import ToolOutcome
from tether.protocol.updates import RejectedBy, Usage
from tether.providers.base import Completed, Provider
from tether.tools.context import SessionRunState
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    MetaRecord,
    SystemRecord,
    ToolResultRecord,
)
from tether.transcript.writer import TranscriptWriter

MAX_DISPLAY_CHARS = 200_000
"""Display content (diffs hold whole files) larger than this is not kept in the transcript."""


class HistoryMixin:
    session_id: str
    cwd: Path
    messages: list[Message]
    transcript: TranscriptWriter | None
    provider: Provider
    state: SessionRunState
    title: str | None
    turns: int
    created_at: str
    meter: UsageMeter
    _recalled: set[Path]

    def record(self, record: Any) -> None:
        if self.transcript is not None:
            self.transcript.append(record)

    async def record_durable(self, record: Any) -> None:
        if self.transcript is not None:
            await self.transcript.append_durable(record)

    def append_assistant(
        self, turn_id: str, message: Message, completed: Completed | None = None
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
                model=self.provider.model,
                stop_reason=completed.stop_reason if completed else None,
                usage=usage,
            )
        )

    def append_tool_results(
        self, turn_id: str, assistant: Message, outcomes: list[ToolOutcome]
    ) -> None:
        by_id = {o.block.tool_use_id: o.block for o in outcomes}
        blocks = [by_id.get(u.id) or self.interrupted_result(u.id) for u in assistant.tool_uses]
        display = {
            o.block.tool_use_id: [c.to_wire() for c in o.display]
            for o in outcomes
            if (o.display or o.rejected)
            and sum(len(str(c)) for c in o.display) <= MAX_DISPLAY_CHARS
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

    def append_meta(self, turn_id: str | None, message: Message, kind: str) -> None:
        """A message for the model that editors do not show (memory, notifications...)."""
        self.messages.append(message)
        self.record(
            AttachmentRecord(
                session_id=self.session_id, turn_id=turn_id, message=message, attachment=kind
            )
        )

    def interrupted_result(self, tool_use_id: str) -> ToolResultBlock:
        return tool_result(tool_use_id, INTERRUPTED_TOOL_RESULT, is_error=True)

    def record_transition(self, turn_id: str, step: Transition) -> None:
        if step.kind != "next_turn":
            self.record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=turn_id,
                    subtype="transition",
                    data={"kind": step.kind},
                )
            )

    def record_compaction(
        self, turn_id: str | None, trigger: str, before: int, after: int, kept: list[Message]
    ) -> None:
        for record in boundary_records(self, turn_id, trigger, before, after, kept):  # type: ignore[arg-type]
            self.record(record)
        self._recalled.clear()

    def replace_conversation(self, messages: list[Message], last_uuid: str | None) -> None:
        """Continue from an earlier point (rewind): these messages, and the transcript
        branching off after ``last_uuid``."""
        self.messages[:] = messages
        if self.transcript is not None:
            self.transcript.last_uuid = last_uuid
        self._recalled.clear()

    async def save_meta(self) -> None:
        """Write the tail metadata now (title, turns, usage) and make it durable."""
        self.record(self.meta())
        if self.transcript is not None:
            await self.transcript.flush()

    def record_turn_end(self, turn_id: str, reason: str, message: str) -> None:
        self.record(
            SystemRecord(
                session_id=self.session_id,
                turn_id=turn_id,
                subtype="turn_end",
                data={"reason": reason, "message": message},
            )
        )
        if self.state.files.changed:
            self.state.files.changed = False
            self.record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=turn_id,
                    subtype="files",
                    data={"files": self.state.files.snapshot()},
                )
            )
        self.record(self.meta())

    def meta(self) -> MetaRecord:
        return MetaRecord(
            session_id=self.session_id,
            title=self.title,
            workspace=str(self.cwd),
            created_at=self.created_at,
            model=self.provider.model,
            mode=self.state.mode,
            turns=self.turns,
            usage=self.meter.session,
        )
