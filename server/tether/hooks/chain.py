"""Several sources of hooks for one session, seen by the engine as one.

A session's hooks can come from more than one place: the settings' command hooks, and
callbacks a program registered over the Agent SDK's control protocol. Every source is asked
(in parallel, like the hooks of one source) and their verdicts combine the way Claude Code
combines hooks: for PreToolUse deny > ask > allow; any block or ``continue: false`` wins;
context texts are joined in source order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, TypeVar

from tether.core.hooks import (
    HookNotice,
    Hooks,
    PromptHookVerdict,
    StopHookVerdict,
    ToolHookVerdict,
)
from tether.hooks.outcome import joined, strongest

T = TypeVar("T")


def _first(values: Sequence[T | None]) -> T | None:
    return next((v for v in values if v is not None), None)


class HooksChain:
    """Implements ``Hooks`` by asking every source and combining their verdicts."""

    def __init__(self, sources: Sequence[Hooks]) -> None:
        self.sources = list(sources)

    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        verdicts = await asyncio.gather(
            *(s.pre_tool_use(tool, tool_input, tool_use_id) for s in self.sources)
        )
        return _tool_verdict(verdicts)

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        verdicts = await asyncio.gather(
            *(
                s.post_tool_use(tool, tool_input, tool_use_id, response, is_error)
                for s in self.sources
            )
        )
        return _tool_verdict(verdicts)

    async def user_prompt_submit(self, prompt: str) -> PromptHookVerdict:
        verdicts = await asyncio.gather(*(s.user_prompt_submit(prompt) for s in self.sources))
        return PromptHookVerdict(
            block_reason=_first([v.block_reason for v in verdicts]),
            additional_context=joined([v.additional_context for v in verdicts]),
        )

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        verdicts = await asyncio.gather(
            *(
                s.stop(stop_hook_active=stop_hook_active, last_message=last_message)
                for s in self.sources
            )
        )
        return _stop_verdict(verdicts)

    async def subagent_stop(
        self, *, stop_hook_active: bool, last_message: str, agent_transcript_path: str = ""
    ) -> StopHookVerdict:
        verdicts = await asyncio.gather(
            *(
                s.subagent_stop(
                    stop_hook_active=stop_hook_active,
                    last_message=last_message,
                    agent_transcript_path=agent_transcript_path,
                )
                for s in self.sources
            )
        )
        return _stop_verdict(verdicts)

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        reasons = await asyncio.gather(
            *(s.pre_compact(trigger, custom_instructions) for s in self.sources)
        )
        return joined(list(reasons))

    async def session_start(self, source: str) -> str | None:
        contexts = await asyncio.gather(*(s.session_start(source) for s in self.sources))
        return joined(list(contexts))

    def drain_notices(self) -> list[HookNotice]:
        return [notice for s in self.sources for notice in s.drain_notices()]


def _tool_verdict(verdicts: Sequence[ToolHookVerdict]) -> ToolHookVerdict:
    decision = strongest([v.decision for v in verdicts])
    return ToolHookVerdict(
        decision=decision,
        reason=joined([v.reason for v in verdicts if v.decision == decision]) or "",
        updated_input=_first([v.updated_input for v in verdicts]),
        stop_turn=_first([v.stop_turn for v in verdicts]),
        additional_context=joined([v.additional_context for v in verdicts]),
        updated_output=_first([v.updated_output for v in verdicts][::-1]),
        updated_mcp_output=_first([v.updated_mcp_output for v in verdicts][::-1]),
    )


def _stop_verdict(verdicts: Sequence[StopHookVerdict]) -> StopHookVerdict:
    stop = _first([v.stop_turn for v in verdicts])
    if stop is not None:
        return StopHookVerdict(stop_turn=stop)
    return StopHookVerdict(block_reason=joined([v.block_reason for v in verdicts]))
