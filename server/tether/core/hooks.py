"""The hook seam of the loop. ``NoHooks`` does nothing; the settings layer provides command
hooks with Claude Code's contract (PreToolUse, PostToolUse, UserPromptSubmit, Stop...)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class ToolHookVerdict:
    decision: Literal["allow", "ask", "deny"] | None = None
    """None: no opinion; the rules and the mode decide."""
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    stop_turn: str | None = None
    """``continue: false`` — end the turn with this message."""
    additional_context: str | None = None
    updated_output: Any = None
    """After a call (``updatedToolOutput``): the result the model and the program see in
    place of the tool's own; None keeps it."""
    updated_mcp_output: Any = None
    """The same for an MCP tool's result (``updatedMCPToolOutput``); other tools ignore it."""


@dataclass(frozen=True)
class StopHookVerdict:
    block_reason: str | None = None
    """Set: the model must keep going, told why."""
    stop_turn: str | None = None
    """Set: end the turn now as ``hook_stopped`` with this message."""


@dataclass(frozen=True)
class HookNotice:
    """Something a hook run says to the user: its ``systemMessage``, or its failure."""

    level: Literal["info", "warning", "error"]
    message: str


@dataclass(frozen=True)
class AgentScope:
    """The subagent whose work is running (its hooks' inputs and its permission questions
    name it, as Claude Code's do)."""

    agent_id: str
    agent_type: str

    def fields(self) -> dict[str, str]:
        return {"agent_id": self.agent_id, "agent_type": self.agent_type}


current_agent: ContextVar[AgentScope | None] = ContextVar("current_agent", default=None)
"""Set while a subagent runs (``engine/subagents.py``); tasks it starts inherit it."""


@dataclass(frozen=True)
class PromptHookVerdict:
    block_reason: str | None = None
    additional_context: str | None = None


class Hooks(Protocol):
    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict: ...

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict: ...

    async def user_prompt_submit(self, prompt: str) -> PromptHookVerdict: ...

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict: ...

    async def subagent_stop(
        self, *, stop_hook_active: bool, last_message: str, agent_transcript_path: str = ""
    ) -> StopHookVerdict: ...

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        """A reason to block the compaction, or None."""
        ...

    async def session_start(self, source: str) -> str | None:
        """Context for the model when a session starts, resumes or was compacted."""
        ...

    def drain_notices(self) -> list[HookNotice]:
        """What hook runs since the last call have to tell the user (shown as notices)."""
        ...


class NoHooks:
    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        return ToolHookVerdict()

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        return ToolHookVerdict()

    async def user_prompt_submit(self, prompt: str) -> PromptHookVerdict:
        return PromptHookVerdict()

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        return StopHookVerdict()

    async def subagent_stop(
        self, *, stop_hook_active: bool, last_message: str, agent_transcript_path: str = ""
    ) -> StopHookVerdict:
        return StopHookVerdict()

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        return None

    async def session_start(self, source: str) -> str | None:
        return None

    def drain_notices(self) -> list[HookNotice]:
        return []


class SubagentHooks:
    """A subagent uses its parent's hooks, except that its end is a SubagentStop."""

    def __init__(self, parent: Hooks, transcript_path: str = "") -> None:
        self.parent = parent
        self.transcript_path = transcript_path

    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        return await self.parent.pre_tool_use(tool, tool_input, tool_use_id)

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        return await self.parent.post_tool_use(tool, tool_input, tool_use_id, response, is_error)

    async def user_prompt_submit(self, prompt: str) -> PromptHookVerdict:
        return PromptHookVerdict()  # the task prompt comes from the agent, not the user

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        return await self.parent.subagent_stop(
            stop_hook_active=stop_hook_active,
            last_message=last_message,
            agent_transcript_path=self.transcript_path,
        )

    async def subagent_stop(
        self, *, stop_hook_active: bool, last_message: str, agent_transcript_path: str = ""
    ) -> StopHookVerdict:
        return await self.parent.subagent_stop(
            stop_hook_active=stop_hook_active,
            last_message=last_message,
            agent_transcript_path=agent_transcript_path,
        )

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        return await self.parent.pre_compact(trigger, custom_instructions)

    async def session_start(self, source: str) -> str | None:
        return None

    def drain_notices(self) -> list[HookNotice]:
        return []  # the runs are the parent's: its turn shows them
