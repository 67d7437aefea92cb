"""``--output-format stream-json``: a session's updates as the lines Claude Code writes.

One JSON object per line, each with ``uuid`` and ``session_id``, in the shapes the Agent SDKs
parse (``claude_agent_sdk._internal.message_parser``) and Claude Code 2.1 emits:

- ``system``/``init`` before a turn's messages: cwd, tools, MCP servers, model, mode;
- ``assistant``: one message per content block (``text``, ``thinking``, ``tool_use``), with
  the envelope of the API message it belongs to (id, model, usage), written as the block
  completes;
- ``user``: a ``tool_result`` per finished tool call (``tool_use_result`` carries the tool's
  structured output), and after an interrupt the same closing lines Claude Code writes;
- ``stream_event`` (with ``--include-partial-messages``): the API's stream events
  (``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta``,
  ``message_stop``) rebuilt from the updates;
- ``system``/``compact_boundary`` when the conversation was summarised, ``system``/``status``
  when the permission mode changed, ``system``/``task_started``/``task_notification`` for
  background tasks;
- ``result`` last, with the turn's usage, cost and permission denials.

Everything is derived from ``SessionUpdate``s, so it works the same whichever driver runs
the session. What updates do not carry is rebuilt and documented here: message ids are
Tether's own (``msg_tether_...``), thinking blocks have no signature, and a tool result's
content is what the tool showed (its text, its terminal output, or its change as a unified
diff).
"""

from __future__ import annotations

import difflib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tether.cli.driver import SessionFacts, TurnOutcome
from tether.cli.result import TurnCounter, result_message
from tether.core.messages import INTERRUPTED_TOOL_RESULT
from tether.protocol.content import TerminalContent, TextToolContent, ToolContent
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Compaction,
    ModeChange,
    SessionUpdate,
    TaskUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    UsageUpdate,
)

COMPAT_VERSION = "2.1.332"
"""The Claude Code version whose stream format this follows (the Agent SDK reads
``claude_code_version`` from ``system``/``init`` to decide what the CLI supports)."""
INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL = "[Request interrupted by user for tool use]"

Write = Callable[[dict[str, Any]], None]


def _usage(usage: UsageUpdate | None) -> dict[str, int]:
    if usage is None:
        return {
            "input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
        }
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
    }


def tool_result_text(content: list[ToolContent] | None) -> str:
    """What a tool showed, as the text of its ``tool_result``."""
    parts: list[str] = []
    for item in content or []:
        if isinstance(item, TextToolContent):
            parts.append(item.text)
        elif isinstance(item, TerminalContent):
            exit_note = f"\nExit code {item.exit_code}" if item.exit_code else ""
            parts.append(item.output + exit_note)
        else:
            diff = difflib.unified_diff(
                (item.old_text or "").splitlines(keepends=True),
                item.new_text.splitlines(keepends=True),
                item.uri,
                item.uri,
            )
            parts.append("".join(diff))
    return "\n".join(parts)


@dataclass
class _Block:
    kind: str
    """``text``, ``thinking`` or ``tool_use``."""
    index: int
    parts: list[str] = field(default_factory=lambda: list[str]())


@dataclass
class _Response:
    """One model response while its updates arrive."""

    id: str
    blocks: int = 0
    open: _Block | None = None
    tool_uses: int = 0


@dataclass
class _Call:
    done: bool = False


class StreamJsonEncoder:
    """Turns one session's updates into stream-json lines, turn after turn."""

    def __init__(self, write: Write, *, partial: bool = False) -> None:
        self._write = write
        self.partial = partial
        self.session_id = ""
        self.model = ""
        self._response: _Response | None = None
        self._calls: dict[str, _Call] = {}
        self._last_usage: UsageUpdate | None = None
        self._tasks: set[str] = set()
        self._last_had_tools = False
        self.counter = TurnCounter()

    # -- lines --------------------------------------------------------------------------

    def _emit(self, obj: dict[str, Any]) -> None:
        self._write({**obj, "session_id": self.session_id, "uuid": str(uuid.uuid4())})

    def init(self, facts: SessionFacts) -> None:
        """``system``/``init``, at the start of each turn (the turn's first request follows)."""
        self.session_id, self.model = facts.session_id, facts.model
        self._emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(facts.cwd),
                "tools": facts.tools,
                "mcp_servers": [{"name": s.name, "status": s.status} for s in facts.mcp_servers],
                "model": facts.model,
                "permissionMode": facts.mode,
                "slash_commands": facts.slash_commands,
                "apiKeySource": "none",
                "output_style": "default",
                "claude_code_version": COMPAT_VERSION,
            }
        )
        self.requesting()

    def status(self, mode: str) -> None:
        self._emit({"type": "system", "subtype": "status", "status": None, "permissionMode": mode})

    def session_state(self, state: str) -> None:
        """What the Agent SDK asks for with ``CLAUDE_CODE_SDK_READS_SESSION_STATE``: running,
        requires_action (a question is out) or idle (no turn owed)."""
        self._emit(
            {
                "type": "system",
                "subtype": "session_state_changed",
                "state": state,
                "sdk_host_only": True,
            }
        )

    def requesting(self) -> None:
        """With partial messages, Claude Code says when a model request goes out."""
        if self.partial:
            self._emit({"type": "system", "subtype": "status", "status": "requesting"})

    def begin_turn(self) -> None:
        self._response = None
        self._last_had_tools = False
        self._calls = {}
        self._last_usage = None
        self.counter = TurnCounter()

    def result(self, outcome: TurnOutcome) -> None:
        self._close_response()
        self._emit(result_message(outcome, self.counter.stats, self.model))

    # -- updates ------------------------------------------------------------------------

    def update(self, update: SessionUpdate) -> None:
        self.counter.update(update)
        if isinstance(update, AgentMessageChunk):
            self._chunk("text", update.text)
        elif isinstance(update, AgentThoughtChunk):
            self._chunk("thinking", update.text)
        elif isinstance(update, ToolCall):
            self._tool_use(update)
        elif isinstance(update, ToolCallUpdate):
            self._tool_update(update)
        elif isinstance(update, UsageUpdate):
            self._response_done(update)
        elif isinstance(update, TurnEnd):
            self._turn_end(update)
        elif isinstance(update, Compaction) and update.strategy == "summary":
            trigger = "manual" if update.trigger == "manual" else "auto"
            metadata = {"trigger": trigger, "pre_tokens": update.tokens_before}
            self._emit(
                {"type": "system", "subtype": "compact_boundary", "compact_metadata": metadata}
            )
        elif isinstance(update, ModeChange):
            self.status(update.mode)
        elif isinstance(update, TaskUpdate):
            self._task(update)

    def _stream_event(self, event: dict[str, Any]) -> None:
        if self.partial:
            self._emit({"type": "stream_event", "event": event, "parent_tool_use_id": None})

    def _response_now(self) -> _Response:
        if self._response is None:
            self._response = _Response(f"msg_tether_{uuid.uuid4().hex[:20]}")
            self._stream_event(
                {
                    "type": "message_start",
                    "message": {**self._envelope([]), "usage": _usage(None)},
                }
            )
        return self._response

    def _envelope(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        assert self._response is not None
        return {
            "id": self._response.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            # Blocks are written as they complete, before the response's usage is known.
            "usage": _usage(None),
        }

    def _open(self, kind: str, opening: dict[str, Any]) -> _Block:
        response = self._response_now()
        if response.open is not None:
            self._close_block()
        block = _Block(kind, response.blocks)
        response.blocks += 1
        response.open = block
        start = {"type": "content_block_start", "index": block.index, "content_block": opening}
        self._stream_event(start)
        return block

    def _chunk(self, kind: str, text: str) -> None:
        response = self._response_now()
        block = response.open
        if block is None or block.kind != kind:
            empty = {"type": "text", "text": ""}
            if kind == "thinking":
                empty = {"type": "thinking", "thinking": "", "signature": ""}
            block = self._open(kind, empty)
        block.parts.append(text)
        delta = (
            {"type": "text_delta", "text": text}
            if kind == "text"
            else {"type": "thinking_delta", "thinking": text}
        )
        self._stream_event({"type": "content_block_delta", "index": block.index, "delta": delta})

    def _close_block(self) -> None:
        response = self._response
        if response is None or response.open is None:
            return
        block, response.open = response.open, None
        text = "".join(block.parts)
        if block.kind == "text":
            content = {"type": "text", "text": text}
        elif block.kind == "thinking":
            content = {"type": "thinking", "thinking": text, "signature": ""}
        else:
            return  # a tool_use block was written whole when it was announced
        self._assistant(content)
        self._stream_event({"type": "content_block_stop", "index": block.index})

    def _assistant(self, content: dict[str, Any]) -> None:
        message = self._envelope([content])
        self._emit({"type": "assistant", "message": message, "parent_tool_use_id": None})

    def _tool_use(self, call: ToolCall) -> None:
        name = call.tool_name or call.title
        self._calls[call.tool_call_id] = _Call()
        response = self._response_now()
        opening: dict[str, Any] = {
            "type": "tool_use",
            "id": call.tool_call_id,
            "name": name,
            "input": {},
        }
        block = self._open("tool_use", opening)
        response.tool_uses += 1
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.raw_input)}
        self._stream_event({"type": "content_block_delta", "index": block.index, "delta": delta})
        self._assistant({**opening, "input": call.raw_input})
        self._stream_event({"type": "content_block_stop", "index": block.index})
        response.open = None

    def _response_done(self, usage: UsageUpdate) -> None:
        """A model response ended (its usage is known): close it."""
        previous, self._last_usage = self._last_usage, usage
        response = self._response
        if response is None:
            return
        self._close_block()
        stop = "tool_use" if response.tool_uses else "end_turn"
        self._last_had_tools = bool(response.tool_uses)
        this = _usage(usage)
        if previous is not None:
            before = _usage(previous)
            this = {k: v - before[k] for k, v in this.items()}
        delta = {"stop_reason": stop, "stop_sequence": None}
        self._stream_event({"type": "message_delta", "delta": delta, "usage": this})
        self._stream_event({"type": "message_stop"})
        self._response = None
        if response.tool_uses and all(c.done for c in self._calls.values()):
            self.requesting()  # the tools finished while the response was still streaming

    def _close_response(self) -> None:
        if self._response is not None:
            self._close_block()
            self._response = None

    def _tool_update(self, update: ToolCallUpdate) -> None:
        if update.status not in ("completed", "failed"):
            return
        call = self._calls.get(update.tool_call_id)
        if call is not None:
            call.done = True
        text = tool_result_text(update.content)
        if not text and update.rejected is not None:
            name = self.counter.name_of(update.tool_call_id)
            text = f"{name} was not run: the {update.rejected} said no"
        elif not text and update.status == "failed":
            # A failed call shows its error; one that shows nothing was interrupted.
            text = INTERRUPTED_TOOL_RESULT
        block: dict[str, Any] = {
            "tool_use_id": update.tool_call_id,
            "type": "tool_result",
            "content": text,
        }
        if update.status == "failed":
            block["is_error"] = True
        line: dict[str, Any] = {
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": None,
        }
        if update.raw_output is not None:
            line["tool_use_result"] = update.raw_output
        self._emit(line)
        if (
            self._last_had_tools
            and self._response is None
            and all(c.done for c in self._calls.values())
        ):
            self.requesting()  # every result is in: they go back to the model

    def _turn_end(self, end: TurnEnd) -> None:
        self._close_response()
        if end.stop_reason != "cancelled":
            return
        pending = [(i, c) for i, c in self._calls.items() if not c.done]
        interrupted_tools = bool(pending) or self._last_had_tools
        for tool_id, call in pending:
            call.done = True
            block = {
                "type": "tool_result",
                "content": INTERRUPTED_TOOL_RESULT,
                "is_error": True,
                "tool_use_id": tool_id,
            }
            self._user([block])
        text = INTERRUPTED_FOR_TOOL if interrupted_tools else INTERRUPTED
        self._user([{"type": "text", "text": text}])

    def _user(self, content: list[dict[str, Any]]) -> None:
        message = {"role": "user", "content": content}
        self._emit({"type": "user", "message": message, "parent_tool_use_id": None})

    def _task(self, task: TaskUpdate) -> None:
        base = {"type": "system", "task_id": task.task_id, "tool_use_id": task.tool_call_id}
        if task.status == "running":
            if task.task_id not in self._tasks:
                self._tasks.add(task.task_id)
                self._emit({**base, "subtype": "task_started", "description": task.description})
            return
        self._emit(
            {
                **base,
                "subtype": "task_notification",
                "status": task.status,
                "output_file": "",
                "summary": task.summary or task.description,
            }
        )
