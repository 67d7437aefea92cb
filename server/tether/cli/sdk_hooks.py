"""Hook callbacks registered by an Agent SDK program, as the engine's ``Hooks``.

``initialize`` names, per event, matchers with callback ids. When the event fires, every
matching callback is asked with a ``hook_callback`` control request carrying the same
input a command hook gets on stdin; its answer is the JSON a command hook prints, and is
read and combined the same way (``tether.hooks.outcome``, ``tether.hooks.verdicts``). A
callback that fails is a non-blocking error, unless its matcher says ``onFailure: block``.

A failed call's hook is PostToolUseFailure (with ``error``), as in Claude Code. SessionStart
callbacks hear of compactions only: Claude Code runs SessionStart for a new or resumed
session before ``initialize`` registers the program's callbacks. Events Tether's engine does
not have (Notification, SubagentStart, PermissionDenied...) are reported by
``unsupported`` so the caller can say so; PermissionRequest is asked by the permission
asker (``cli/permission_tool.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from tether.cli.control import ControlChannel, ControlError, ControlTimeout
from tether.cli.sdk_wire import HookMatcherConfig
from tether.core.hooks import (
    HookNotice,
    PromptHookVerdict,
    StopHookVerdict,
    ToolHookVerdict,
    current_agent,
)
from tether.editor.port import PermissionRequest
from tether.hooks.matchers import matcher_matches
from tether.hooks.outcome import HookNotices, HookOutcome, read_outcome
from tether.hooks.runner import HookRun
from tether.hooks.verdicts import (
    compact_block,
    post_tool_verdict,
    pre_tool_verdict,
    prompt_verdict,
    session_context,
    stop_verdict,
)

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
)


class SdkHooks:
    """Implements ``tether.core.hooks.Hooks`` by calling back into the SDK program."""

    def __init__(
        self,
        channel: ControlChannel,
        config: Mapping[str, Sequence[HookMatcherConfig]],
        *,
        session_id: Callable[[], str],
        cwd: Path,
        mode: Callable[[], str],
        transcript_path: Callable[[], str] = lambda: "",
        source: str = "startup",
    ) -> None:
        self._channel = channel
        self._config = {event: list(matchers) for event, matchers in config.items()}
        self._session_id = session_id
        self._cwd = cwd
        self._mode = mode
        self._transcript_path = transcript_path
        self._source = source
        """SessionStart's source for the first prompt: ``startup`` or ``resume``."""
        self._started = False
        self._notices = HookNotices()

    @property
    def unsupported(self) -> list[str]:
        return [event for event in self._config if event not in EVENTS]

    async def _ask(
        self, event: str, subject: str | None, fields: Mapping[str, Any], tool_use_id: str | None
    ) -> list[HookOutcome]:
        return [outcome for outcome, _ in await self._gather(event, subject, fields, tool_use_id)]

    async def _gather(
        self, event: str, subject: str | None, fields: Mapping[str, Any], tool_use_id: str | None
    ) -> list[tuple[HookOutcome, dict[str, Any] | None]]:
        payload = {
            "session_id": self._session_id(),
            "transcript_path": self._transcript_path(),
            "cwd": str(self._cwd),
            "permission_mode": self._mode(),
            "hook_event_name": event,
            **(scope.fields() if (scope := current_agent.get()) is not None else {}),
            **fields,
        }
        # Claude Code gives a callback of an event with no tool call an id of its own.
        tool_use_id = tool_use_id or str(uuid.uuid4())
        calls = [
            self._call(callback_id, matcher, payload, tool_use_id)
            for matcher in self._config.get(event, ())
            if matcher_matches(matcher.matcher, subject)
            for callback_id in matcher.callback_ids
        ]
        results = list(await asyncio.gather(*calls))
        self._notices.note(event, [outcome for outcome, _ in results], subject)
        return results

    def drain_notices(self) -> list[HookNotice]:
        return self._notices.drain()

    async def _call(
        self,
        callback_id: str,
        matcher: HookMatcherConfig,
        payload: Mapping[str, Any],
        tool_use_id: str,
    ) -> tuple[HookOutcome, dict[str, Any] | None]:
        request = {
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": payload,
            "tool_use_id": tool_use_id,
        }
        label = f"SDK hook {callback_id}"
        timeout = matcher.timeout or DEFAULT_TIMEOUT_S
        try:
            answer = await self._channel.request(request, timeout=timeout)
        except ControlTimeout as e:
            unanswered = _unanswered(str(payload["hook_event_name"]), timeout)
            if unanswered is not None:
                return unanswered, None
            if matcher.blocks_on_failure:
                return HookOutcome(blocked=True, reason=f"{label} did not answer: {e}"), None
            log.warning("%s failed: %s", label, e)
            return HookOutcome(failed=f"{label} did not answer in time ({e})"), None
        except ControlError as e:
            if matcher.blocks_on_failure:
                return HookOutcome(blocked=True, reason=f"{label} failed: {e}"), None
            log.warning("%s failed: %s", label, e)
            return HookOutcome(failed=f"{label} failed ({e})"), None
        # The answer is what a command hook prints on stdout: read it the same way.
        run = HookRun(command=label, exit_code=0, stdout=json.dumps(answer))
        return read_outcome(run), answer

    async def permission_request(
        self, request: PermissionRequest, suggestions: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """PermissionRequest callbacks, before the question goes out: the decision one of
        them gave (``{"behavior": "allow"|"deny", ...}``, a deny over an allow), or None
        when none decided."""
        if "PermissionRequest" not in self._config:
            return None
        tool = request.tool_name
        fields = {
            "tool_name": tool,
            "tool_input": request.raw_input,
            "permission_suggestions": suggestions,
        }
        decisions: list[dict[str, Any]] = []
        for outcome, answer in await self._gather(
            "PermissionRequest", tool, fields, request.tool_call_id
        ):
            if outcome.blocked:
                decisions.append({"behavior": "deny", "message": outcome.reason})
                continue
            specific: Any = (answer or {}).get("hookSpecificOutput")
            if not isinstance(specific, dict):
                continue
            decision: Any = cast(dict[str, Any], specific).get("decision")
            if isinstance(decision, dict):
                found = cast(dict[str, Any], decision)
                if found.get("behavior") in ("allow", "deny"):
                    decisions.append(found)
        denied = [d for d in decisions if d["behavior"] == "deny"]
        return (denied or decisions or [None])[0]

    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        fields = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": tool_use_id}
        return pre_tool_verdict(await self._ask("PreToolUse", tool, fields, tool_use_id))

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        fields: dict[str, Any] = {
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
        }
        if is_error:
            # A call that failed is a PostToolUseFailure, not a PostToolUse (as Claude Code).
            failure = {**fields, "error": _error_text(response), "is_interrupt": False}
            event = "PostToolUseFailure"
            return post_tool_verdict(await self._ask(event, tool, failure, tool_use_id))
        fields["tool_response"] = response
        return post_tool_verdict(await self._ask("PostToolUse", tool, fields, tool_use_id))

    async def user_prompt_submit(self, prompt: str) -> PromptHookVerdict:
        context: list[str | None] = []
        if not self._started:  # the session's first prompt: SessionStart comes first
            self._started = True
            context.append(await self.session_start(self._source))
        outcomes = await self._ask("UserPromptSubmit", None, {"prompt": prompt}, None)
        return prompt_verdict(outcomes, context)

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        fields = {"stop_hook_active": stop_hook_active, "last_assistant_message": last_message}
        return stop_verdict(await self._ask("Stop", None, fields, None))

    async def subagent_stop(
        self, *, stop_hook_active: bool, last_message: str, agent_transcript_path: str = ""
    ) -> StopHookVerdict:
        fields = {
            "stop_hook_active": stop_hook_active,
            "last_assistant_message": last_message,
            "agent_transcript_path": agent_transcript_path,
        }
        return stop_verdict(await self._ask("SubagentStop", None, fields, None))

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        fields = {"trigger": trigger, "custom_instructions": custom_instructions}
        return compact_block(await self._ask("PreCompact", trigger, fields, None))

    async def session_start(self, source: str) -> str | None:
        if source in ("startup", "resume"):
            # Claude Code runs these before initialize registers the program's callbacks, so
            # a program's SessionStart callbacks hear only of compactions and clears.
            return None
        return session_context(await self._ask("SessionStart", source, {"source": source}, None))


PRE_TOOL_UNANSWERED = (
    "PreToolUse hook did not respond before its timeout (the program may be unreachable). "
    "The tool call was not executed; other configured hooks may not have completed."
)


def _unanswered(event: str, timeout: float) -> HookOutcome | None:
    """What a callback that never answered means, event by event, as in Claude Code: a
    PreToolUse call does not run, a prompt is not sent; the other events go on without the
    answer (a PostToolUse result stays as it was, a Stop ends the turn, a PermissionRequest
    leaves the question to ``can_use_tool``)."""
    if event == "PreToolUse":
        return HookOutcome(blocked=True, reason=PRE_TOOL_UNANSWERED)
    if event == "UserPromptSubmit":
        return HookOutcome(
            blocked=True, reason=f"UserPromptSubmit hook callback timed out after {timeout:g}s"
        )
    return None


def _error_text(response: Any) -> str:
    """The failure as Claude Code gives it to PostToolUseFailure: the message, without the
    ``<tool_use_error>`` tags the model reads it in."""
    if isinstance(response, str):
        text = response
    elif isinstance(response, list):
        parts = [getattr(block, "text", None) for block in response]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        text = "\n".join(p for p in parts if isinstance(p, str))
    else:
        return json.dumps(response, default=str)
    return text.removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
