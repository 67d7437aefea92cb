"""The hook seam of the loop. ``NoHooks`` does nothing; the settings layer provides command
hooks with Claude Code's contract (PreToolUse, PostToolUse, UserPromptSubmit, Stop...)."""

from __future__ import annotations

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


@dataclass(frozen=True)
class StopHookVerdict:
    block_reason: str | None = None
    """Set: the model must keep going, told why."""
    stop_turn: str | None = None
    """Set: end the turn now as ``hook_stopped`` with this message."""


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
