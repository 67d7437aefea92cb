"""A foreground subagent's steps as Claude Code 2.1.337 writes them in stream-json.

Each tool call of the subagent is a ``system``/``task_progress`` line (what it is doing, how
many calls so far) and an ``assistant`` line with the ``tool_use``; each result a ``user``
line with the ``tool_result``. All carry ``parent_tool_use_id`` (the Agent call),
``agent_id`` and ``subagent_type``. Its own text is not written, as Claude Code writes it
only when asked (``forwardSubagentText``); its report is the Agent call's result.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from tether.cli.assistant_stream import api_usage
from tether.protocol.content import ToolContent
from tether.protocol.updates import SubagentActivity, ToolCall

Emit = Callable[[dict[str, Any]], None]


class SubagentLines:
    def __init__(
        self,
        emit: Emit,
        model: Callable[[], str],
        result_text: Callable[[list[ToolContent] | None], str],
    ) -> None:
        self._emit = emit
        self._model = model
        self._result_text = result_text
        self._calls: dict[str, int] = {}
        """Tool calls so far, per Agent call."""
        self._started: dict[str, float] = {}

    def started(self, agent_call_id: str) -> None:
        self._calls[agent_call_id] = 0
        self._started[agent_call_id] = time.monotonic()

    def step(self, step: SubagentActivity, task_id: str) -> None:
        tags = {
            "parent_tool_use_id": step.tool_call_id,
            "agent_id": step.agent_id,
            "subagent_type": step.agent_type,
        }
        inner = step.update
        if isinstance(inner, ToolCall):
            self._tool_use(step, inner, task_id, tags)
        elif inner.status in ("completed", "failed"):
            block: dict[str, Any] = {
                "tool_use_id": inner.tool_call_id,
                "type": "tool_result",
                "content": self._result_text(inner.content),
            }
            if inner.status == "failed":
                block["is_error"] = True
            self._emit({"type": "user", "message": {"role": "user", "content": [block]}, **tags})

    def _tool_use(
        self, step: SubagentActivity, call: ToolCall, task_id: str, tags: dict[str, Any]
    ) -> None:
        calls = self._calls.get(step.tool_call_id, 0) + 1
        self._calls[step.tool_call_id] = calls
        since = self._started.get(step.tool_call_id, time.monotonic())
        name = call.tool_name or call.title
        self._emit(
            {
                "type": "system",
                "subtype": "task_progress",
                "task_id": task_id,
                "tool_use_id": step.tool_call_id,
                "description": call.title,
                "subagent_type": step.agent_type,
                "usage": {
                    "total_tokens": 0,
                    "tool_uses": calls,
                    "duration_ms": int((time.monotonic() - since) * 1000),
                },
                "last_tool_name": name,
            }
        )
        use = {"type": "tool_use", "id": call.tool_call_id, "name": name, "input": call.raw_input}
        message = {
            "id": f"msg_tether_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": self._model(),
            "content": [use],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": api_usage(None),
        }
        self._emit({"type": "assistant", "message": message, **tags})
