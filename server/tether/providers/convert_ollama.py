"""Conversions between Tether's (Anthropic-shaped) messages and Ollama's native chat API
(``POST /api/chat``; the shapes are Ollama's ``api/types.go`` ``ChatRequest``, ``Message``,
``ToolCall`` and ``ChatResponse``, and its docs/api.md "Generate a chat completion").

How they differ from chat completions (``convert_openai``):

* A tool call's ``arguments`` is a JSON object, not a string, both ways; a call carries an
  ``id`` (Ollama 0.12 and later) and the result answering it names it in ``tool_call_id``
  and the tool in ``tool_name``.
* Images are base64 strings in a message's ``images`` (a tool result's too), not parts of
  its content, which is always a string.
* Thinking comes back as ``message.thinking`` and is sent back the same way.
* The stream is newline-delimited JSON: each line a ``ChatResponse`` with a piece of the
  message (tool calls arrive whole), the last with ``done: true``, ``done_reason`` and the
  counts (``prompt_eval_count``: the whole prompt, ``eval_count``: the reply).
"""

from __future__ import annotations

import json
from typing import cast

from tether.core.messages import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    WebSearchToolResultBlock,
)
from tether.providers.base import (
    Completed,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.convert_openai import (
    document_text_note,
    fallback_call_id,
    search_note,
    stop_reason,
    tool_use,
)

Wire = dict[str, object]
"""One JSON object as Ollama sends or takes it."""


def assistant_message(message: Message) -> Wire | None:
    """An assistant message as Ollama takes it back (None: nothing in it to send)."""
    text = "".join(
        b.text
        if isinstance(b, TextBlock)
        else search_note(b)
        if isinstance(b, WebSearchToolResultBlock)
        else ""
        for b in message.content
    )
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock))
    calls: list[Wire] = [
        {"id": use.id, "function": {"name": use.name, "arguments": use.input}}
        for use in message.tool_uses
    ]
    if not text and not calls:
        return None
    wire: Wire = {"role": "assistant", "content": text}
    if thinking:
        wire["thinking"] = thinking
    if calls:
        wire["tool_calls"] = calls
    return wire


def user_messages(message: Message, tool_names: dict[str, str]) -> list[Wire]:
    """A user message's tool results (one ``tool`` message each, named from
    ``tool_names``: call id -> tool), then its other content as one ``user`` message."""
    out = [_tool_message(r, tool_names.get(r.tool_use_id)) for r in message.tool_results]
    texts: list[str] = []
    images: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ImageBlock):
            images.append(block.data)
        elif isinstance(block, DocumentBlock):
            texts.append(document_text_note(block))
    if texts or images:
        wire: Wire = {"role": "user", "content": "\n\n".join(texts)}
        if images:
            wire["images"] = images
        out.append(wire)
    return out


def _tool_message(result: ToolResultBlock, name: str | None) -> Wire:
    text = result.text
    for note in (document_text_note(p) for p in result.content if isinstance(p, DocumentBlock)):
        text = f"{text}\n{note}" if text else note
    wire: Wire = {
        "role": "tool",
        "content": f"[tool error] {text}" if result.is_error else text,
        "tool_call_id": result.tool_use_id,
    }
    if name:
        wire["tool_name"] = name
    images = [p.data for p in result.content if isinstance(p, ImageBlock)]
    if images:
        wire["images"] = images
    return wire


# -- responses ------------------------------------------------------------------------


def _object(value: object) -> Wire:
    return cast("Wire", value) if isinstance(value, dict) else {}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class ChatState:
    """Accumulates the lines of one response (or the one object of a non-streamed one)."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: list[Block] = []
        self._done_reason: str | None = None
        self._usage = TokenUsage()

    def feed(self, line: Wire) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        message = _object(line.get("message"))
        thinking = message.get("thinking")
        if isinstance(thinking, str) and thinking:
            self._thinking.append(thinking)
            out.append(ThinkingDelta(thinking))
        content = message.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            out.append(TextDelta(content))
        calls = message.get("tool_calls")
        for raw in cast("list[object]", calls) if isinstance(calls, list) else []:
            call = _object(raw)
            function = _object(call.get("function"))
            call_id = call.get("id")
            name = function.get("name")
            arguments = function.get("arguments")
            block = tool_use(
                call_id if isinstance(call_id, str) and call_id else fallback_call_id(),
                name if isinstance(name, str) else "",
                arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
            )
            self._calls.append(block)
            out.extend((ToolUseStarted(block.id, block.name), ToolUseReady(block)))
        if line.get("done") is True:
            reason = line.get("done_reason")
            self._done_reason = reason if isinstance(reason, str) and reason else "stop"
            self._usage = TokenUsage(
                input_tokens=_count(line.get("prompt_eval_count")),
                output_tokens=_count(line.get("eval_count")),
            )
        return out

    def incomplete(self) -> str | None:
        if self._done_reason is None:
            return "the stream ended before its last line (done: true)"
        return None

    def finish(self) -> list[StreamEvent]:
        blocks: list[Block] = []
        if self._thinking:
            blocks.append(ThinkingBlock(thinking="".join(self._thinking)))
        if self._text:
            blocks.append(TextBlock(text="".join(self._text)))
        blocks.extend(self._calls)
        reason = stop_reason(self._done_reason, has_tool_calls=bool(self._calls))
        return [Completed(Message(role="assistant", content=blocks), reason, self._usage)]


def completed_from_object(response: Wire) -> Completed:
    """The ``Completed`` event of a whole (non-streamed) response."""
    state = ChatState()
    state.feed(response)
    if state.incomplete() is not None:
        raise ValueError("the response is not done (no done: true)")
    completed = state.finish()[-1]
    assert isinstance(completed, Completed)
    return completed
