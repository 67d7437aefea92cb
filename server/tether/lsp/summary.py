"""The sentence a turn ends with in ``window/showMessage`` for clients without a plugin:
"Tether: fixed mean() in ops.py — 1 file changed", or for a failed turn an error a user can
act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types

from tether.protocol.updates import (
    AgentMessageChunk,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
)

if TYPE_CHECKING:
    from tether.engine.turns import TurnResult

SENTENCE_CHARS = 120
SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")
HINTS: dict[str, str] = {
    "model_error": 'Check the model settings (ANTHROPIC_API_KEY, or "model" in '
    ".tether/settings.json) and try again.",
    "prompt_too_long": "Start a fresh session with the tether.newSession command.",
    "budget_exhausted": "Raise the budget in the settings, or start a fresh session with "
    "tether.newSession.",
    "hook_stopped": "A hook of this workspace stopped the turn; the transcript shows its message.",
}


@dataclass
class TurnDigest:
    """What one turn said and changed, gathered from its updates."""

    reply: str = ""
    """The agent's last message."""
    changed: list[str] = field(default_factory=lambda: list[str]())
    """Files edited, in order, without repeats."""
    _edits: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    _fresh_message: bool = True

    def feed(self, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk):
            if self._fresh_message:
                self.reply, self._fresh_message = "", False
            self.reply += update.text
        elif isinstance(update, ToolCall):
            self._fresh_message = True
            path = update.raw_input.get("file_path")
            if update.tool_kind == "edit" and isinstance(path, str):
                self._edits[update.tool_call_id] = path
        elif isinstance(update, ToolCallUpdate) and update.status == "completed":
            path = self._edits.pop(update.tool_call_id, None)
            if path is not None and path not in self.changed:
                self.changed.append(path)


def first_sentence(text: str) -> str:
    text = text.strip().lstrip("#*-> ").strip()
    sentence = SENTENCE_END.split(text, maxsplit=1)[0].strip() if text else ""
    sentence = sentence.rstrip(".")
    word = sentence.split(" ", 1)[0]
    if word == "A" or (len(word) > 1 and word[0].isupper() and word[1:].islower()):
        sentence = sentence[0].lower() + sentence[1:]  # it follows "Tether: "
    if len(sentence) > SENTENCE_CHARS:
        sentence = sentence[: SENTENCE_CHARS - 1] + "…"
    return sentence


def files(changed: list[str]) -> str:
    if not changed:
        return "no files changed"
    return "1 file changed" if len(changed) == 1 else f"{len(changed)} files changed"


def ending(result: TurnResult, digest: TurnDigest) -> types.ShowMessageParams:
    """The message a plain client shows when the turn ends."""
    stop = result.terminal.stop_reason
    if stop == "error":
        error = result.terminal.error
        what = error.message if error is not None else "the turn failed"
        hint = HINTS.get(result.terminal.reason, "Try again, or start a fresh session.")
        return types.ShowMessageParams(
            type=types.MessageType.Error, message=f"Tether: {what.rstrip('.')}. {hint}"
        )
    if stop == "cancelled":
        return types.ShowMessageParams(
            type=types.MessageType.Warning, message=f"Tether: stopped — {files(digest.changed)}"
        )
    said = first_sentence(digest.reply) or "done"
    if stop == "max_turn_requests":
        said += " (stopped after too many steps; ask again to go on)"
    elif stop == "max_tokens":
        said += " (the reply hit the output limit)"
    return types.ShowMessageParams(
        type=types.MessageType.Info, message=f"Tether: {said} — {files(digest.changed)}"
    )
