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
  when the permission mode changed, ``system``/``informational`` for what the user should
  know (a hook's ``systemMessage`` or failure, a refused prompt, a retry),
  ``system``/``task_started``/``task_notification`` for
  background tasks; for a subagent run in the foreground (the Agent tool), as Claude Code
  2.1.337 writes it: ``task_started``, the agent's prompt as a ``user`` line whose
  ``parent_tool_use_id`` is the Agent call, its tool calls and results
  (``cli/subagent_stream.py``), then ``task_updated`` and ``task_notification`` before the
  call's result;
- ``result`` last, with the turn's usage, cost and permission denials.

``cli/assistant_stream.py`` writes each model response's lines. Everything is derived from
``SessionUpdate``s, so it works the same whichever driver runs
the session. What updates do not carry is rebuilt and documented here: message ids are
Tether's own (``msg_tether_...``), thinking blocks have no signature, and a tool result's
content is what the tool showed (its text, its terminal output, or its change as a unified
diff).
"""

from __future__ import annotations

import difflib
import uuid
from collections.abc import Callable
from typing import Any

from tether.cli.assistant_stream import ResponseWriter
from tether.cli.driver import SessionFacts, TurnOutcome
from tether.cli.result import TurnCounter, blocked_prompt_text, result_message
from tether.cli.subagent_stream import SubagentLines
from tether.core.messages import INTERRUPTED_TOOL_RESULT
from tether.protocol.content import TerminalContent, TextToolContent, ToolContent
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Compaction,
    ModeChange,
    Notice,
    SessionUpdate,
    SubagentActivity,
    TaskUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    UsageUpdate,
)
from tether.tools.diff_view import numbered_as_in_file

COMPAT_VERSION = "2.1.332"
"""The Claude Code version whose stream format this follows (the Agent SDK reads
``claude_code_version`` from ``system``/``init`` to decide what the CLI supports)."""
INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL = "[Request interrupted by user for tool use]"

Write = Callable[[dict[str, Any]], None]


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
            parts.append("".join(numbered_as_in_file(diff, item)))
    return "\n".join(parts)


class StreamJsonEncoder:
    """Turns one session's updates into stream-json lines, turn after turn."""

    def __init__(self, write: Write, *, partial: bool = False, asks: bool = True) -> None:
        self._write = write
        self.partial = partial
        self.asks = asks
        """A program answers questions (``--permission-prompt-tool``): a "no" of its own
        is not one the run decided alone (no ``system``/``permission_denied``)."""
        self.session_id = ""
        self.model = ""
        self._response = ResponseWriter(self._emit, partial=partial, model=lambda: self.model)
        self._calls: dict[str, bool] = {}
        """Tool calls of the turn: finished or not."""
        self._tasks: set[str] = set()
        self._agents: dict[str, str] = {}
        """Foreground Agent calls of the turn: tool_use id -> task id."""
        self._last_had_tools = False
        self.counter = TurnCounter()
        self._subagents = SubagentLines(self._emit, lambda: self.model, tool_result_text)

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
        self._response.reset()
        self._last_had_tools = False
        self._calls = {}
        self._agents = {}
        self.counter = TurnCounter()

    def result(self, outcome: TurnOutcome, prompt: str = "") -> None:
        """The turn's ``result``; a prompt a UserPromptSubmit hook refused is said first in a
        ``system``/``informational`` line, and is the result's text, as in Claude Code."""
        self._response.close()
        blocked = None
        if not self.counter.stats.prompt_accepted:
            blocked = blocked_prompt_text(outcome, prompt)
        if blocked is not None:
            self.informational(
                blocked,
                prevent_continuation=True,
                prompt_submit_outcome={
                    "kind": "blocked_by_hook",
                    "prompt_kept": False,
                    "reason": outcome.error or "",
                },
            )
        self._emit(result_message(outcome, self.counter.stats, self.model, blocked))

    def informational(self, content: str, level: str = "warning", **extra: Any) -> None:
        """``system``/``informational``: something Claude Code shows the user (a refused
        prompt, a hook's ``systemMessage``)."""
        self._emit(
            {"type": "system", "subtype": "informational", "content": content, "level": level}
            | extra
        )

    # -- updates ------------------------------------------------------------------------

    def update(self, update: SessionUpdate) -> None:
        self.counter.update(update)
        if isinstance(update, AgentMessageChunk):
            self._response.chunk("text", update.text)
        elif isinstance(update, AgentThoughtChunk):
            self._response.chunk("thinking", update.text)
        elif isinstance(update, ToolCall):
            self._calls[update.tool_call_id] = False
            name = update.tool_name or update.title
            self._response.tool_use(update.tool_call_id, name, update.raw_input)
            if name == "Agent" and not update.raw_input.get("run_in_background"):
                self._agent_started(update)
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
        elif isinstance(update, SubagentActivity):
            task_id = self._agents.get(update.tool_call_id)
            if task_id is not None:  # a foreground agent's (a background one has its log)
                self._subagents.step(update, task_id)
        elif isinstance(update, Notice):
            # Claude Code's levels: a hook's message is a "notice".
            self.informational(update.message, "notice" if update.level == "info" else update.level)

    def _denied(self, update: ToolCallUpdate, text: str) -> None:
        """A call denied with no question put to the program (a rule, the mode, or no one
        to ask), as Claude Code 2.1 says it; a hook's or the program's own no is not."""
        line: dict[str, Any] = {
            "type": "system",
            "subtype": "permission_denied",
            "tool_name": self.counter.name_of(update.tool_call_id),
            "tool_use_id": update.tool_call_id,
            "message": text,
        }
        if update.rejected in ("rule", "mode"):
            line["decision_reason_type"] = update.rejected
        self._emit(line)

    def _response_done(self, usage: UsageUpdate) -> None:
        tool_uses = self._response.done(usage)
        if tool_uses is None:
            return
        self._last_had_tools = tool_uses > 0
        if tool_uses and all(self._calls.values()):
            self.requesting()  # the tools finished while the response was still streaming

    def _tool_update(self, update: ToolCallUpdate) -> None:
        if update.status not in ("completed", "failed"):
            return
        if update.tool_call_id in self._calls:
            self._calls[update.tool_call_id] = True
        text = tool_result_text(update.content)
        task_id = self._agents.pop(update.tool_call_id, None)
        if task_id is not None:
            self._agent_ended(task_id, update, text)
        if not text and update.rejected is not None:
            name = self.counter.name_of(update.tool_call_id)
            text = f"{name} was not run: the {update.rejected} said no"
        if update.rejected in ("rule", "mode") or (update.rejected == "user" and not self.asks):
            self._denied(update, text)
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
        if self._last_had_tools and not self._response.writing and all(self._calls.values()):
            self.requesting()  # every result is in: they go back to the model

    def _turn_end(self, end: TurnEnd) -> None:
        self._response.close()
        if end.stop_reason != "cancelled":
            return
        pending = [tool_id for tool_id, done in self._calls.items() if not done]
        for tool_id in pending:
            self._calls[tool_id] = True
            block = {
                "type": "tool_result",
                "content": INTERRUPTED_TOOL_RESULT,
                "is_error": True,
                "tool_use_id": tool_id,
            }
            self._user([block])
        text = INTERRUPTED_FOR_TOOL if pending or self._last_had_tools else INTERRUPTED
        self._user([{"type": "text", "text": text}])

    def _agent_started(self, call: ToolCall) -> None:
        task_id = uuid.uuid4().hex[:17]
        self._agents[call.tool_call_id] = task_id
        prompt = str(call.raw_input.get("prompt", ""))
        agent_type = call.raw_input.get("subagent_type") or "general-purpose"
        started = {
            "type": "system",
            "subtype": "task_started",
            "task_id": task_id,
            "tool_use_id": call.tool_call_id,
            "description": str(call.raw_input.get("description", "")),
            "subagent_type": agent_type,
            "is_backgrounded": False,
            "task_type": "local_agent",
            "prompt": prompt,
        }
        self._emit(started)
        self._subagents.started(call.tool_call_id)
        message = {"role": "user", "content": [{"type": "text", "text": prompt}]}
        self._emit(
            {
                "type": "user",
                "message": message,
                "parent_tool_use_id": call.tool_call_id,
                "subagent_type": agent_type,
                "task_description": started["description"],
            }
        )

    def _agent_ended(self, task_id: str, update: ToolCallUpdate, text: str) -> None:
        status = "completed" if update.status == "completed" else "failed"
        patch = {"status": status}
        updated = {"type": "system", "subtype": "task_updated", "task_id": task_id, "patch": patch}
        self._emit(updated)
        self._emit(
            {
                "type": "system",
                "subtype": "task_notification",
                "task_id": task_id,
                "tool_use_id": update.tool_call_id,
                "status": status,
                "output_file": "",
                "summary": text,
            }
        )

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
