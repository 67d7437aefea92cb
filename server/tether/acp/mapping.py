"""Tether's session updates and tool content as ACP's wire models (``acp.schema``); the
end of a turn as a stop reason. Content blocks are converted in ``content.py``.

Tether's ``SessionUpdate`` shapes follow ACP's ``session/update`` variants, so most of this
is renaming. The choices that are not: Bash cards are titled with the command itself (users
want to see what runs); edit cards carry a diff from the tool input at once (Zed and
CodeCompanion review from it); a tool call that runs in a client terminal shows that
terminal instead of text; live user messages are not echoed (the client already shows
what was typed), only replayed on ``session/load``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import acp.schema as wire
from acp import RequestError

from tether.acp.config import config_options
from tether.acp.content import user_chunks
from tether.editor.port import PermissionRequest
from tether.engine.transitions import Terminal
from tether.protocol.content import (
    DiffContent,
    TerminalContent,
    TextToolContent,
    ToolContent,
)
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Location,
    ModeChange,
    Notice,
    Plan,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    UsageUpdate,
    UserMessage,
)

AcpUpdate = (
    wire.UserMessageChunk
    | wire.AgentMessageChunk
    | wire.AgentThoughtChunk
    | wire.ToolCallStart
    | wire.ToolCallProgress
    | wire.AgentPlanUpdate
    | wire.AvailableCommandsUpdate
    | wire.CurrentModeUpdate
    | wire.ConfigOptionUpdate
    | wire.UsageUpdate
)
AcpToolContent = (
    wire.ContentToolCallContent | wire.FileEditToolCallContent | wire.TerminalToolCallContent
)


@dataclass
class View:
    """What the mapping needs to know about the session an update belongs to."""

    cwd: Path
    model: str
    terminals: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    """Tool call id -> id of the client terminal it runs in."""
    session_cost: float | None = None
    replay: bool = False


# -- session updates (Tether -> client) ------------------------------------------------


def session_updates(update: SessionUpdate, view: View) -> list[AcpUpdate]:
    """The ACP updates for one Tether update (none for kinds ACP has no place for:
    task, compaction, notice, turn_end, which becomes the prompt's answer); a notice of
    ``progress`` (a wait) becomes a thought."""
    if isinstance(update, AgentMessageChunk):
        return [
            wire.AgentMessageChunk(session_update="agent_message_chunk", content=_text(update.text))
        ]
    if isinstance(update, AgentThoughtChunk):
        return [
            wire.AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(update.text))
        ]
    if isinstance(update, ToolCall):
        return [_tool_call(update, view)]
    if isinstance(update, ToolCallUpdate):
        return [_tool_call_update(update, view)]
    if isinstance(update, Plan):
        entries = [
            wire.PlanEntry(content=e.content, priority="medium", status=e.status)
            for e in update.entries
        ]
        return [wire.AgentPlanUpdate(session_update="plan", entries=entries)]
    if isinstance(update, UsageUpdate):
        cost = (
            None
            if view.session_cost is None
            else wire.Cost(amount=view.session_cost, currency="USD")
        )
        return [
            wire.UsageUpdate(
                session_update="usage_update",
                used=update.context_tokens,
                size=update.context_window,
                cost=cost,
            )
        ]
    if isinstance(update, ModeChange):
        return [
            wire.CurrentModeUpdate(
                session_update="current_mode_update", current_mode_id=update.mode
            ),
            wire.ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=config_options(update.mode, view.model),
            ),
        ]
    if isinstance(update, Notice) and update.progress:
        # ACP has no status line: a wait (for the model server) shows as the agent's thought.
        text = _text(f"{update.message}\n")
        return [wire.AgentThoughtChunk(session_update="agent_thought_chunk", content=text)]
    if isinstance(update, UserMessage) and view.replay:
        return [*user_chunks(update.content)]
    return []


def _text(text: str) -> wire.TextContentBlock:
    return wire.TextContentBlock(type="text", text=text)


def title_for(title: str, kind: ToolKind, raw_input: Mapping[str, Any], cwd: Path) -> str:
    command = raw_input.get("command")
    if kind == "execute" and isinstance(command, str) and command.strip():
        return command
    return title.replace(f"{cwd}{os.sep}", "")


def _tool_call(update: ToolCall, view: View) -> wire.ToolCallStart:
    return wire.ToolCallStart(
        session_update="tool_call",
        tool_call_id=update.tool_call_id,
        title=title_for(update.title, update.tool_kind, update.raw_input, view.cwd),
        kind=update.tool_kind,
        status=update.status,
        raw_input=update.raw_input,
        locations=_locations(update.locations or []),
        content=_input_diff(update, view.cwd) or None,
    )


def _tool_call_update(update: ToolCallUpdate, view: View) -> wire.ToolCallProgress:
    terminal = view.terminals.get(update.tool_call_id)
    content: list[AcpToolContent] | None
    if terminal is not None:
        # The client's terminal shows the live output; every update keeps it on the card.
        content = [wire.TerminalToolCallContent(type="terminal", terminal_id=terminal)]
    else:
        content = tool_content(update.content) if update.content is not None else None
    return wire.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=update.tool_call_id,
        status=update.status,
        title=update.title,
        content=content,
        raw_output=update.raw_output,
    )


def _locations(locations: Sequence[Location]) -> list[wire.ToolCallLocation] | None:
    out = [
        wire.ToolCallLocation(path=str(path), line=loc.line)
        for loc in locations
        if (path := uri_to_path(loc.uri)) is not None
    ]
    return out or None


def _input_diff(update: ToolCall, cwd: Path) -> list[AcpToolContent]:
    """The diff an Edit/Write call will make, from its input alone (the permission
    question and the result carry the exact diff against the file)."""
    raw = update.raw_input
    path = raw.get("file_path")
    if update.tool_kind != "edit" or not isinstance(path, str):
        return []
    target = str(Path(os.path.normpath(cwd / os.path.expanduser(path))))
    old, new, content = raw.get("old_string"), raw.get("new_string"), raw.get("content")
    if isinstance(old, str) and isinstance(new, str):
        return [
            wire.FileEditToolCallContent(
                type="diff", path=target, old_text=old or None, new_text=new
            )
        ]
    if isinstance(content, str):
        return [
            wire.FileEditToolCallContent(type="diff", path=target, old_text=None, new_text=content)
        ]
    return []


def tool_content(content: Sequence[ToolContent]) -> list[AcpToolContent]:
    out: list[AcpToolContent] = []
    for item in content:
        if isinstance(item, TextToolContent):
            out.append(wire.ContentToolCallContent(type="content", content=_text(item.text)))
        elif isinstance(item, DiffContent):
            path = uri_to_path(item.uri)
            out.append(
                wire.FileEditToolCallContent(
                    type="diff",
                    path=str(path) if path is not None else item.uri,
                    old_text=item.old_text,
                    new_text=item.new_text,
                )
            )
        else:
            out.append(wire.ContentToolCallContent(type="content", content=_text(_console(item))))
    return out


def _console(item: TerminalContent) -> str:
    fence = "```"
    while fence in item.output:
        fence += "`"
    text = f"{fence}console\n{item.output.rstrip()}\n{fence}"
    if item.exit_code:
        text += f"\nexit code {item.exit_code}"
    return text


def permission_tool_call(request: PermissionRequest, view: View) -> wire.ToolCallUpdate:
    """The tool call inside ``session/request_permission``, diff included: CodeCompanion
    reviews edits from the request alone."""
    return wire.ToolCallUpdate(
        tool_call_id=request.tool_call_id,
        title=title_for(request.title, request.tool_kind, request.raw_input, view.cwd),
        kind=request.tool_kind,
        status="pending",
        raw_input=request.raw_input,
        content=tool_content(request.content) or None,
    )


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


# -- the end of a turn -----------------------------------------------------------------


def stop_reason(terminal: Terminal) -> wire.StopReason:
    """ACP has no "error" stop reason: a failed turn answers the prompt with an error
    (the session stays usable); turns that were stopped on purpose end normally."""
    reason = terminal.stop_reason
    if reason != "error":
        return reason
    if terminal.reason == "budget_exhausted":
        return "max_turn_requests"
    if terminal.reason == "hook_stopped":
        return "end_turn"
    message = terminal.message or terminal.reason.replace("_", " ")
    raise RequestError(-32603, message, {"reason": terminal.reason})


def stop_notice(terminal: Terminal) -> str | None:
    """Why a turn that ends normally was stopped, for the user to read."""
    if terminal.reason in ("budget_exhausted", "hook_stopped"):
        return f"\n\n(Stopped: {terminal.message or terminal.reason.replace('_', ' ')})"
    return None
