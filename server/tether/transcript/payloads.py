"""The payloads of ``system`` and ``progress`` records: one model per subtype or event.

Fields a reader can do without have defaults, so the shapes older versions wrote (a
``compact_boundary`` without token counts, say) still load as their typed payload.

On disk a payload sits in the record's ``data`` object (camelCase keys), and its kind in
the record's ``subtype`` (system) or ``event`` (progress) field, as Tether has always
written them. Here the kind is part of the payload model, so writers cannot name one kind
and fill in another's fields, and readers match on types instead of string keys.

A payload this Tether does not know (a newer writer's, or a damaged one) loads as
``UnknownSystemData`` / ``UnknownProgressData`` with its raw fields: readers skip it, and
it never fails a resume.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from tether.core.messages import ToolResultBlock
from tether.protocol.updates import Mode, PlanEntry

AttachmentKind = Literal[
    "context",
    "memory",
    "hook_context",
    "file_changed",
    "attachment",
    "task_notification",
    "continuation",
    "stop_hook",
    "interrupt",
    "compact_summary",
    "compact_tail",
    "compact_reattach",
    "changes_undone",
]
"""Why a message the editor does not show was given to the model."""
ATTACHMENT_KINDS: frozenset[str] = frozenset(get_args(AttachmentKind))


class _Data(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


# -- system records (on the conversation chain) ---------------------------------------


class ModeData(_Data):
    """The permission mode changed (or the mode a session started in)."""

    subtype: Literal["mode"] = Field(default="mode", exclude=True)
    mode: Mode


class PlanData(_Data):
    """The todo plan as the model last wrote it."""

    subtype: Literal["plan"] = Field(default="plan", exclude=True)
    entries: list[PlanEntry] = Field(default_factory=lambda: list[PlanEntry]())


class TransitionData(_Data):
    """The turn loop went round again for a reason other than tool results."""

    subtype: Literal["transition"] = Field(default="transition", exclude=True)
    kind: str


class TurnEndData(_Data):
    """A turn ended; ``reason`` is the terminal reason (see ``stop_reasons``)."""

    subtype: Literal["turn_end"] = Field(default="turn_end", exclude=True)
    reason: str = "completed"
    message: str = ""


class FilesData(_Data):
    """What the agent has read (hash, partial), so a resumed session knows what changed."""

    subtype: Literal["files"] = Field(default="files", exclude=True)
    files: dict[str, dict[str, object]] = Field(
        default_factory=lambda: dict[str, dict[str, object]]()
    )


class ContextTrimData(_Data):
    """Oversized tool results stored in files, or old ones cleared (no summary)."""

    subtype: Literal["tool_result_budget", "microcompact"] = Field(exclude=True)
    count: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


class CompactBoundaryData(_Data):
    """The history before this point was replaced by a summary."""

    subtype: Literal["compact_boundary"] = Field(default="compact_boundary", exclude=True)
    trigger: str = "auto"
    tokens_before: int = 0
    tokens_after: int = 0
    discovered_tools: list[str] = Field(default_factory=lambda: list[str]())


class RewindData(_Data):
    """The conversation was rewound to before ``turn_id``; files put back or not."""

    subtype: Literal["rewind"] = Field(default="rewind", exclude=True)
    turn_id: str = ""
    restored: list[str] = Field(default_factory=lambda: list[str]())
    failed: dict[str, str | None] = Field(default_factory=lambda: dict[str, str | None]())


# -- progress records (outside the chain) ---------------------------------------------


class ToolStartedData(_Data):
    """Written durably before a tool with side effects runs."""

    event: Literal["tool_started"] = Field(default="tool_started", exclude=True)
    tool_use_id: str
    name: str = ""


class ToolFinishedData(_Data):
    """One call's result, written as it finishes (before its batch's message)."""

    event: Literal["tool_finished"] = Field(default="tool_finished", exclude=True)
    tool_use_id: str
    result: ToolResultBlock


class TaskData(_Data):
    """A background task started or finished."""

    event: Literal["task_started", "task_finished"] = Field(exclude=True)
    task_id: str
    tool_use_id: str | None = None
    description: str = ""
    output_file: str = ""
    status: str = ""
    reason: str | None = None


class SubagentData(_Data):
    """A subagent started; its side-chain transcript is at ``path``."""

    event: Literal["subagent"] = Field(default="subagent", exclude=True)
    agent_id: str
    tool_use_id: str = ""
    agent_type: str = Field(default="", alias="type")
    path: str = ""
    background: bool = False


class CheckpointData(_Data):
    """The text a file had before a turn first changed it (None: it did not exist)."""

    event: Literal["checkpoint"] = Field(default="checkpoint", exclude=True)
    turn_id: str
    path: str
    before: str | None = None


class CheckpointMissingData(_Data):
    """A file a shell command changed whose earlier text was not kept (too big, binary,
    over the cache): a rewind reports it instead of restoring it."""

    event: Literal["checkpoint_missing"] = Field(default="checkpoint_missing", exclude=True)
    turn_id: str
    path: str
    reason: str = ""


HunkState = Literal["pending", "kept", "undone"]
"""A hunk of a turn's changes: not reviewed yet, kept by the user, or undone."""


class ChangeAfterData(_Data):
    """The text a file had when the turn that changed it ended (None: it was removed), or
    why it is not known: with the turn's checkpoint, what the turn's hunks are made of."""

    event: Literal["change_after"] = Field(default="change_after", exclude=True)
    turn_id: str
    path: str
    after: str | None = None
    problem: str | None = None
    shell: bool = False
    """A shell command changed it last: ``after`` was read from disk, and an editor's
    buffer of it may not show it yet."""


class HunkStateData(_Data):
    """Hunks of one file of a turn were kept or undone (or came back: ``pending``)."""

    event: Literal["hunk_state"] = Field(default="hunk_state", exclude=True)
    turn_id: str
    path: str
    hunk_ids: list[str] = Field(default_factory=lambda: list[str]())
    state: HunkState = "pending"
    last_turn: str | None = None
    """The session's last turn when this happened: a later turn that changes the file
    settles the hunks' state (the text no longer tells what the user did)."""


class UndoNotedData(_Data):
    """The model was told that the user undid these hunks (with the next prompt)."""

    event: Literal["undo_noted"] = Field(default="undo_noted", exclude=True)
    hunk_ids: list[str] = Field(default_factory=lambda: list[str]())


class UnknownSystemData(_Data):
    """A system payload of a kind this Tether does not know, or one that does not
    validate (a damaged line, an older shape): kept as it is, read by nobody."""

    model_config = ConfigDict(extra="allow")
    subtype: str = Field(exclude=True)


class UnknownProgressData(_Data):
    """The same for progress payloads."""

    model_config = ConfigDict(extra="allow")
    event: str = Field(exclude=True)


SystemData = (
    Annotated[
        ModeData
        | PlanData
        | TransitionData
        | TurnEndData
        | FilesData
        | ContextTrimData
        | CompactBoundaryData
        | RewindData,
        Field(discriminator="subtype"),
    ]
    | UnknownSystemData
)
"""Whatever fails the typed payloads validates as the unknown one: a resume never fails
on a payload."""
ProgressData = (
    Annotated[
        ToolStartedData
        | ToolFinishedData
        | TaskData
        | SubagentData
        | CheckpointData
        | CheckpointMissingData
        | ChangeAfterData
        | HunkStateData
        | UndoNotedData,
        Field(discriminator="event"),
    ]
    | UnknownProgressData
)
