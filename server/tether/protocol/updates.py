"""SessionUpdate: everything the user can see, as typed variants (docs/protocol.md, `update.kind`).

The shapes follow ACP's ``session/update`` variants so the ACP front door is a thin mapping;
the LSP front door wraps them in ``tether/sessionUpdate``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from tether.protocol.base import WireModel
from tether.protocol.content import ContentBlock, ToolContent

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "cancelled", "refusal", "error"]
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
PlanStatus = Literal["pending", "in_progress", "completed"]
TaskStatus = Literal["running", "completed", "failed", "killed"]


class Usage(WireModel):
    """Token usage and cost of one turn (or of a session so far)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None

    def plus(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
            cost_usd=cost,
        )


class Location(WireModel):
    uri: str
    line: int | None = None


class UserMessage(WireModel):
    kind: Literal["user_message"] = "user_message"
    content: list[ContentBlock]


class AgentMessageChunk(WireModel):
    kind: Literal["agent_message_chunk"] = "agent_message_chunk"
    text: str


class AgentThoughtChunk(WireModel):
    kind: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    text: str


class ToolCall(WireModel):
    """A tool call the model made, announced as soon as it is known."""

    kind: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    tool_kind: ToolKind
    tool_name: str | None = None
    """The tool's canonical name (``Read``, ``mcp__github__create_issue``), as rules and
    hooks match it."""
    status: ToolStatus = "pending"
    raw_input: dict[str, Any] = Field(default_factory=dict)
    locations: list[Location] | None = None


RejectedBy = Literal["user", "rule", "hook", "mode"]
"""Who said no to a tool call that therefore did not run."""


class ToolCallUpdate(WireModel):
    kind: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolStatus | None = None
    title: str | None = None
    content: list[ToolContent] | None = None
    raw_output: Any = None
    rejected: RejectedBy | None = None
    """The call did not run because the user, a rule, a hook or the mode said no."""


class PlanEntry(WireModel):
    content: str
    status: PlanStatus
    active_form: str | None = None


class Plan(WireModel):
    kind: Literal["plan"] = "plan"
    entries: list[PlanEntry]


class UsageUpdate(Usage):
    kind: Literal["usage"] = "usage"
    context_tokens: int = 0
    context_window: int = 0


class TaskUpdate(WireModel):
    kind: Literal["task"] = "task"
    task_id: str
    tool_call_id: str | None = None
    status: TaskStatus
    description: str
    summary: str | None = None


class Compaction(WireModel):
    kind: Literal["compaction"] = "compaction"
    trigger: Literal["auto", "manual", "reactive"]
    tokens_before: int
    tokens_after: int
    strategy: Literal["tool_result_budget", "microcompact", "summary"] = "summary"
    """Which rung of the ladder: results stored to files, old results cleared, or a summary."""


class TurnError(WireModel):
    code: str
    message: str


class TurnEnd(WireModel):
    kind: Literal["turn_end"] = "turn_end"
    stop_reason: StopReason
    error: TurnError | None = None


class Notice(WireModel):
    """Something the user should know that is not part of the conversation (retry, warning)."""

    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str
    progress: bool | None = None
    """True: a passing state (waiting for the model server), for where a client shows
    progress; the next such notice or the turn's end replaces it."""


class ModeChange(WireModel):
    kind: Literal["mode"] = "mode"
    mode: Mode


class ChangesUpdate(WireModel):
    """The change set changed: a turn that changed files ended, hunks were kept or undone
    (or found undone or back), turns were rewound. ``tether/listChanges`` has the details."""

    kind: Literal["changes"] = "changes"
    turn_ids: list[str]
    uris: list[str]


class SubagentActivity(WireModel):
    """A step of a subagent run in the foreground, as it happens: one of its tool calls or
    their results, under the Agent call that runs it. The Agent SDK's stream shows these
    with ``parent_tool_use_id``; editors follow the Agent call's own progress instead (the
    LSP front door does not forward them)."""

    kind: Literal["subagent"] = "subagent"
    tool_call_id: str
    """The Agent call."""
    agent_id: str
    agent_type: str
    update: Annotated[ToolCall | ToolCallUpdate, Field(discriminator="kind")]


SessionUpdate = Annotated[
    UserMessage
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallUpdate
    | Plan
    | UsageUpdate
    | TaskUpdate
    | Compaction
    | TurnEnd
    | Notice
    | ModeChange
    | ChangesUpdate
    | SubagentActivity,
    Field(discriminator="kind"),
]

SESSION_UPDATE_ADAPTER: TypeAdapter[SessionUpdate] = TypeAdapter(SessionUpdate)
