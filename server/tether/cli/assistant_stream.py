"""One model response in stream-json: an ``assistant`` line per content block, each with
the envelope of the API message it belongs to, and (with ``--include-partial-messages``)
the API's stream events, rebuilt from the session's updates.

A block is written when it is complete: a text or thinking block when something else
follows it, a ``tool_use`` block when the call is announced (whole, like the API's last
``input_json_delta``). Claude Code writes each block's ``assistant`` line just before its
``content_block_stop``; so does this. A response ends with its usage (``UsageUpdate``):
``message_delta`` with the stop reason and the response's own tokens, then
``message_stop``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tether.protocol.updates import UsageUpdate

Emit = Callable[[dict[str, Any]], None]


def api_usage(usage: UsageUpdate | None) -> dict[str, int]:
    """Usage in the API's names (zeros while unknown)."""
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


@dataclass
class _Block:
    kind: str
    """``text``, ``thinking`` or ``tool_use``."""
    index: int
    parts: list[str] = field(default_factory=lambda: list[str]())


@dataclass
class _Response:
    id: str
    blocks: int = 0
    open: _Block | None = None
    tool_uses: int = 0


class ResponseWriter:
    """Writes the current model response's lines through ``emit``."""

    def __init__(self, emit: Emit, *, partial: bool, model: Callable[[], str]) -> None:
        self._emit = emit
        self.partial = partial
        self._model = model
        self._response: _Response | None = None
        self._last_usage: UsageUpdate | None = None
        """The turn's usage at the end of the previous response (updates are cumulative)."""

    def reset(self) -> None:
        """A new turn."""
        self._response = None
        self._last_usage = None

    # -- what the encoder feeds ----------------------------------------------------------

    def chunk(self, kind: str, text: str) -> None:
        """A piece of text or thinking."""
        response = self._now()
        block = response.open
        if block is None or block.kind != kind:
            empty: dict[str, Any] = {"type": "text", "text": ""}
            if kind == "thinking":
                empty = {"type": "thinking", "thinking": "", "signature": ""}
            block = self._open(kind, empty)
        block.parts.append(text)
        delta = (
            {"type": "text_delta", "text": text}
            if kind == "text"
            else {"type": "thinking_delta", "thinking": text}
        )
        self._event({"type": "content_block_delta", "index": block.index, "delta": delta})

    def tool_use(self, call_id: str, name: str, tool_input: dict[str, Any]) -> None:
        response = self._now()
        opening: dict[str, Any] = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        block = self._open("tool_use", opening)
        response.tool_uses += 1
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
        self._event({"type": "content_block_delta", "index": block.index, "delta": delta})
        self._assistant({**opening, "input": tool_input})
        self._event({"type": "content_block_stop", "index": block.index})
        response.open = None

    def done(self, usage: UsageUpdate) -> int | None:
        """The response ended (its usage is known); returns how many tool calls it made
        (None: no response was being written)."""
        previous, self._last_usage = self._last_usage, usage
        response = self._response
        if response is None:
            return None
        self._close_block()
        this = api_usage(usage)
        if previous is not None:
            before = api_usage(previous)
            this = {k: v - before[k] for k, v in this.items()}
        stop = "tool_use" if response.tool_uses else "end_turn"
        delta = {"stop_reason": stop, "stop_sequence": None}
        self._event({"type": "message_delta", "delta": delta, "usage": this})
        self._event({"type": "message_stop"})
        self._response = None
        return response.tool_uses

    def close(self) -> None:
        """The turn ended: write what is still open (a cancelled response has no usage)."""
        if self._response is not None:
            self._close_block()
            self._response = None

    @property
    def writing(self) -> bool:
        return self._response is not None

    # -- lines ---------------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> None:
        if self.partial:
            self._emit({"type": "stream_event", "event": event, "parent_tool_use_id": None})

    def _now(self) -> _Response:
        if self._response is None:
            self._response = _Response(f"msg_tether_{uuid.uuid4().hex[:20]}")
            self._event({"type": "message_start", "message": self._envelope([])})
        return self._response

    def _envelope(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        assert self._response is not None
        return {
            "id": self._response.id,
            "type": "message",
            "role": "assistant",
            "model": self._model(),
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            # Blocks are written as they complete, before the response's usage is known.
            "usage": api_usage(None),
        }

    def _open(self, kind: str, opening: dict[str, Any]) -> _Block:
        response = self._now()
        if response.open is not None:
            self._close_block()
        block = _Block(kind, response.blocks)
        response.blocks += 1
        response.open = block
        self._event({"type": "content_block_start", "index": block.index, "content_block": opening})
        return block

    def _close_block(self) -> None:
        response = self._response
        if response is None or response.open is None:
            return
        block, response.open = response.open, None
        text = "".join(block.parts)
        if block.kind == "text":
            content = {"type": "text", "text": text}
        else:
            content = {"type": "thinking", "thinking": text, "signature": ""}
        self._assistant(content)
        self._event({"type": "content_block_stop", "index": block.index})

    def _assistant(self, content: dict[str, Any]) -> None:
        message = self._envelope([content])
        self._emit({"type": "assistant", "message": message, "parent_tool_use_id": None})
