"""Command hooks for one session: the engine's ``Hooks`` port, plus the events the engine
does not drive itself (SessionStart runs before the first prompt, SessionEnd on close,
PreCompact and SubagentStop for the callers that compact and run subagents).

Matching hooks of an event run in parallel. Their answers combine the way Claude Code
combines them: any block wins; for PreToolUse deny > ask > allow; context texts are joined;
any ``continue: false`` ends the turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tether.core.environ import Caller, process_umask
from tether.core.hooks import HookNotice, PromptHookVerdict, StopHookVerdict, ToolHookVerdict
from tether.hooks.matchers import select
from tether.hooks.outcome import HookNotices, HookOutcome, joined, read_outcome
from tether.hooks.runner import hook_env, run_hook
from tether.hooks.verdicts import (
    compact_block,
    post_tool_verdict,
    pre_tool_verdict,
    prompt_verdict,
    stop_verdict,
)
from tether.settings.model import HookEvent, HookMatcher

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
SESSION_END_BUDGET_S = 1.5
HooksConfig = Mapping[HookEvent, Sequence[HookMatcher]]


class CommandHooks:
    """Implements ``tether.core.hooks.Hooks`` by running the configured commands."""

    def __init__(
        self,
        root: Path,
        session_id: str,
        config: HooksConfig | None = None,
        *,
        transcript_path: Path | None = None,
        mode: Callable[[], str] = lambda: "default",
        env: Mapping[str, str] | None = None,
        before_first_prompt: Callable[[], Awaitable[None]] | None = None,
        source: str = "startup",
        refresh: Callable[[], None] = lambda: None,
        caller_env: Caller | None = None,
    ) -> None:
        self.root = root
        self.session_id = session_id
        self.config: HooksConfig = config or {}
        self.transcript_path = transcript_path
        self._mode = mode
        self.env: Mapping[str, str] = env or {}
        self._before_first_prompt = before_first_prompt
        self._source = source
        self._started = False
        self._refresh = refresh
        """Applies changed settings files first, so an edited hook runs at its next event."""
        self._notices = HookNotices()
        self._caller_env = caller_env
        """The warm daemon's client the session works for: hooks get its environment and
        umask, none of the daemon's; None in-process."""

    def configure(self, config: HooksConfig, env: Mapping[str, str]) -> None:
        """New settings: the next event uses them."""
        self.config, self.env = config, env

    def use_caller(self, caller: Caller | None) -> None:
        """The session works for another caller: the next event's hooks run in its world."""
        self._caller_env = caller

    # -- running ----------------------------------------------------------------------------

    def _payload(self, event: HookEvent, fields: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript_path or ""),
            "cwd": str(self.root),
            "permission_mode": self._mode(),
            "hook_event_name": event,
            **fields,
        }

    async def _run(
        self,
        event: HookEvent,
        subject: str | None,
        fields: Mapping[str, Any],
        *,
        plain_stdout_is_context: bool = False,
        budget_s: float | None = None,
    ) -> list[HookOutcome]:
        self._refresh()
        hooks = select(self.config, event, subject)
        if not hooks:
            return []
        payload = self._payload(event, fields)
        env = hook_env(self.root, self.env, self._caller_env)
        runs = await asyncio.gather(
            *(
                run_hook(
                    h.command,
                    payload,
                    cwd=self.root,
                    env=env,
                    timeout_s=min(h.timeout or DEFAULT_TIMEOUT_S, budget_s or float("inf")),
                    umask=process_umask(self._caller_env),
                )
                for h in hooks
            )
        )
        outcomes = [read_outcome(r, plain_stdout_is_context=plain_stdout_is_context) for r in runs]
        self._notices.note(event, outcomes)
        return outcomes

    def drain_notices(self) -> list[HookNotice]:
        return self._notices.drain()

    # -- the engine's port --------------------------------------------------------------------

    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        fields = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": tool_use_id}
        return pre_tool_verdict(await self._run("PreToolUse", tool, fields))

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        fields = {
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
            "tool_response": response,
        }
        return post_tool_verdict(await self._run("PostToolUse", tool, fields))

    async def user_prompt_submit(self, prompt: str) -> PromptHookVerdict:
        context: list[str | None] = []
        if not self._started:
            self._started = True
            if self._before_first_prompt is not None:
                try:
                    await self._before_first_prompt()  # e.g. the trust question
                except Exception:  # a failed dialog must not cost the user their prompt
                    log.exception("preparing the session failed")
            context.append(await self.session_start(self._source))
        outcomes = await self._run(
            "UserPromptSubmit", None, {"prompt": prompt}, plain_stdout_is_context=True
        )
        return prompt_verdict(outcomes, context)

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        return await self._stop_event("Stop", stop_hook_active, last_message, {})

    # -- events the engine does not drive ---------------------------------------------------------

    async def subagent_stop(
        self, *, stop_hook_active: bool, last_message: str, agent_transcript_path: str = ""
    ) -> StopHookVerdict:
        extra = {"agent_transcript_path": agent_transcript_path}
        return await self._stop_event("SubagentStop", stop_hook_active, last_message, extra)

    async def _stop_event(
        self, event: HookEvent, active: bool, last: str, extra: Mapping[str, Any]
    ) -> StopHookVerdict:
        fields = {"stop_hook_active": active, "last_assistant_message": last, **extra}
        return stop_verdict(await self._run(event, None, fields))

    async def session_start(self, source: str) -> str | None:
        """SessionStart (startup|resume|clear|compact): context for the model, if any."""
        outcomes = await self._run(
            "SessionStart", source, {"source": source}, plain_stdout_is_context=True
        )
        return joined([o.context for o in outcomes])

    async def session_end(self, reason: str = "other") -> None:
        """SessionEnd has a short budget: closing a session never waits long for hooks."""
        await self._run("SessionEnd", reason, {"reason": reason}, budget_s=SESSION_END_BUDGET_S)

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        """PreCompact (manual|auto): a reason to block compaction, or None."""
        fields = {"trigger": trigger, "custom_instructions": custom_instructions}
        return compact_block(await self._run("PreCompact", trigger, fields))
