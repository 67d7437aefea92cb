"""How ``tether run`` prints a turn: streamed text, one JSON event per line, or one result."""

from __future__ import annotations

import json
import sys
from typing import Any, Protocol, TextIO

from tether.engine.engine import TurnResult
from tether.protocol.updates import (
    AgentMessageChunk,
    Notice,
    Plan,
    SessionUpdate,
    TaskUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
)

_SUBTYPES = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "budget_exhausted": "error_max_budget_usd",
}


class Renderer(Protocol):
    def start(self, info: dict[str, Any]) -> None: ...
    def update(self, session_id: str, turn_id: str, update: SessionUpdate) -> None: ...
    def finish(self, result: TurnResult, info: dict[str, Any]) -> None: ...


def result_object(result: TurnResult, info: dict[str, Any]) -> dict[str, Any]:
    terminal = result.terminal
    usage = result.usage
    return {
        "type": "result",
        "subtype": _SUBTYPES.get(terminal.reason, "error_during_execution"),
        "is_error": terminal.stop_reason != "end_turn",
        "stop_reason": terminal.stop_reason,
        "terminal_reason": terminal.reason,
        "error": terminal.message if terminal.stop_reason == "error" else None,
        "result": info.get("text", ""),
        "session_id": info["session_id"],
        "num_turns": info.get("model_calls", 0),
        "duration_ms": info.get("duration_ms", 0),
        "total_cost_usd": usage.cost_usd,
        "usage": usage.to_wire(),
    }


def usage_line(result: TurnResult, info: dict[str, Any]) -> str:
    u = result.usage
    cost = f" · ${u.cost_usd:.4f}" if u.cost_usd is not None else ""
    cache = f" (cache read {u.cache_read_tokens})" if u.cache_read_tokens else ""
    return (
        f"[tether] {result.terminal.stop_reason} · {info.get('model_calls', 0)} model request(s) · "
        f"{u.input_tokens} in{cache} / {u.output_tokens} out tokens{cost} · "
        f"{info.get('duration_ms', 0)} ms · session {info['session_id']}"
    )


class TextRenderer:
    def __init__(self, verbose: bool = False, out: TextIO | None = None, err: TextIO | None = None):
        self.verbose = verbose
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._titles: dict[str, str] = {}
        self._at_line_start = True

    def start(self, info: dict[str, Any]) -> None:
        return None

    def _err(self, text: str) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True
        self.err.write(text + "\n")
        self.err.flush()

    def update(self, session_id: str, turn_id: str, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk):
            self.out.write(update.text)
            self.out.flush()
            self._at_line_start = update.text.endswith("\n")
        elif isinstance(update, ToolCall):
            self._titles[update.tool_call_id] = update.title
            self._err(f"⏺ {update.title}")
        elif isinstance(update, ToolCallUpdate) and update.status in ("completed", "failed"):
            mark = "✓" if update.status == "completed" else "✗"
            title = self._titles.get(update.tool_call_id, update.tool_call_id)
            detail = ""
            if self.verbose and update.content:
                detail = "\n" + "\n".join(
                    "    " + line
                    for c in update.content
                    for line in str(getattr(c, "text", getattr(c, "output", ""))).splitlines()[:20]
                )
            self._err(f"  {mark} {title}{detail}")
        elif isinstance(update, Plan):
            marks = {"completed": "☑", "in_progress": "▶", "pending": "☐"}
            self._err("\n".join(f"  {marks[e.status]} {e.content}" for e in update.entries))
        elif isinstance(update, Notice):
            self._err(f"[tether] {update.message}")
        elif isinstance(update, TaskUpdate):
            self._err(f"[task {update.task_id}] {update.status}: {update.description}")
        elif isinstance(update, TurnEnd) and update.error is not None:
            self._err(f"[tether] error ({update.error.code}): {update.error.message}")

    def finish(self, result: TurnResult, info: dict[str, Any]) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
        self.err.write(usage_line(result, info) + "\n")
        self.err.flush()


class JsonRenderer:
    """``stream-json``: every event on its own line; ``json``: only the result."""

    def __init__(self, stream: bool, out: TextIO | None = None):
        self.stream = stream
        self.out = out or sys.stdout

    def _line(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def start(self, info: dict[str, Any]) -> None:
        if self.stream:
            self._line({"type": "system", "subtype": "init", **info})

    def update(self, session_id: str, turn_id: str, update: SessionUpdate) -> None:
        if self.stream:
            self._line(
                {
                    "type": "update",
                    "session_id": session_id,
                    "turn_id": turn_id,
                    "update": update.to_wire(),
                }
            )

    def finish(self, result: TurnResult, info: dict[str, Any]) -> None:
        self._line(result_object(result, info))
