"""The ``result`` object that ends a turn in ``json`` and ``stream-json`` output, with the
fields the Agent SDK's ``ResultMessage`` reads, and the text mode's usage line."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from tether.cli.driver import TurnOutcome
from tether.protocol.updates import (
    AgentMessageChunk,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
    UserMessage,
)

_SUBTYPES = {
    "completed": "success",
    # A hook that refused the prompt or said ``continue: false`` did its job: Claude Code
    # ends such a turn with a success result.
    "hook_stopped": "success",
    "max_turns": "error_max_turns",
    "budget_exhausted": "error_max_budget_usd",
}


@dataclass
class TurnStats:
    """What a front end counts while a turn's updates go by."""

    started: float = field(default_factory=time.monotonic)
    responses: int = 0
    """Model responses received (a request that never got an answer is not counted)."""
    api_ms: int = 0
    """Time from each model request to the end of its response (a request is sent when
    the turn starts and when the previous response or its last tool call ended)."""
    last_text: str = ""
    """The text of the last response: the turn's answer."""
    stop_reason: str | None = None
    usage: UsageUpdate | None = None
    denials: list[dict[str, Any]] = field(default_factory=lambda: list[dict[str, Any]]())
    prompt_accepted: bool = False
    """The turn's prompt entered the conversation (a UserPromptSubmit hook may refuse it)."""


class TurnCounter:
    """Keeps a turn's ``TurnStats`` from its updates (every output format uses one)."""

    def __init__(self) -> None:
        self.stats = TurnStats()
        self._text: list[str] = []
        self._asked_at = self.stats.started
        """When the next model request went out: the turn's start, then the end of each
        response or tool call (whichever came last)."""
        self._tool_uses = 0
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}

    def update(self, update: SessionUpdate) -> None:
        if isinstance(update, UserMessage):
            self.stats.prompt_accepted = True
        elif isinstance(update, AgentMessageChunk):
            self._text.append(update.text)
        elif isinstance(update, ToolCall):
            self._tool_uses += 1
            name = update.tool_name or update.title
            self._calls[update.tool_call_id] = (name, update.raw_input)
        elif isinstance(update, ToolCallUpdate) and update.status in ("completed", "failed"):
            self._asked_at = time.monotonic()
            call = self._calls.get(update.tool_call_id)
            if update.rejected is not None and call is not None:
                name, tool_input = call
                self.stats.denials.append(
                    {
                        "tool_name": name,
                        "tool_use_id": update.tool_call_id,
                        "tool_input": tool_input,
                    }
                )
        elif isinstance(update, UsageUpdate):
            now = time.monotonic()
            stats = self.stats
            stats.responses += 1
            stats.api_ms += int((now - self._asked_at) * 1000)
            stats.last_text = "".join(self._text)
            stats.stop_reason = "tool_use" if self._tool_uses else "end_turn"
            stats.usage = update
            self._text, self._tool_uses, self._asked_at = [], 0, now

    def name_of(self, tool_call_id: str) -> str:
        call = self._calls.get(tool_call_id)
        return call[0] if call is not None else "the tool"


def api_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
    }


def blocked_prompt_text(outcome: TurnOutcome, prompt: str) -> str | None:
    """What Claude Code says when a UserPromptSubmit hook refused the prompt; None when the
    turn was not one of those."""
    if outcome.reason != "hook_stopped":
        return None
    return (
        f"UserPromptSubmit operation blocked by hook:\n{outcome.error or ''}\n\n"
        f"Original prompt: {prompt}"
    )


def result_message(
    outcome: TurnOutcome, stats: TurnStats, model: str, text: str | None = None
) -> dict[str, Any]:
    """``text``: the result's text in place of the last response's (a refused prompt)."""
    usage = outcome.usage
    window = stats.usage.context_window if stats.usage is not None else 0
    subtype = _SUBTYPES.get(outcome.reason, "error_during_execution")
    message: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "duration_ms": int((time.monotonic() - stats.started) * 1000),
        "duration_api_ms": stats.api_ms,
        "num_turns": stats.responses,
        "result": stats.last_text if text is None else text,
        "stop_reason": stats.stop_reason,
        "terminal_reason": outcome.reason,
        "total_cost_usd": usage.cost_usd,
        "usage": api_usage(usage),
        "modelUsage": {
            model: {
                "inputTokens": usage.input_tokens,
                "outputTokens": usage.output_tokens,
                "cacheReadInputTokens": usage.cache_read_tokens,
                "cacheCreationInputTokens": usage.cache_creation_tokens,
                "webSearchRequests": 0,
                "costUSD": usage.cost_usd,
                "contextWindow": window,
            }
        },
        "permission_denials": stats.denials,
        "uuid": str(uuid.uuid4()),
    }
    if outcome.error is not None and subtype != "success":
        message["errors"] = [outcome.error]
    return message


def usage_line(outcome: TurnOutcome, stats: TurnStats, session_id: str) -> str:
    u = outcome.usage
    cost = f" · ${u.cost_usd:.4f}" if u.cost_usd is not None else ""
    cache = f" (cache read {u.cache_read_tokens})" if u.cache_read_tokens else ""
    ms = int((time.monotonic() - stats.started) * 1000)
    return (
        f"{outcome.stop_reason} · {stats.responses} model request(s) · "
        f"{u.input_tokens} in{cache} / {u.output_tokens} out tokens{cost} · "
        f"{ms} ms · session {session_id}"
    )
