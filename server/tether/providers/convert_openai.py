"""Conversions between Tether's (Anthropic-shaped) messages and OpenAI chat completions.

The shapes differ in three ways that matter:

* System blocks become one ``system`` message (no cache breakpoints: local servers cache
  prefixes on their own).
* Tool results are separate ``tool`` messages that must directly follow the assistant
  message with the ``tool_calls``; a user message's other content comes after them.
* Tool messages carry text only, so a result's images and PDFs are replaced by a note.
* Chat completions has no provider-side tools: web search is not offered, and searches
  from an earlier (Anthropic) part of the conversation become a text note of the results.

Thinking blocks are not sent back: chat completions has no field for them. Reasoning that
servers stream (``reasoning_content`` from vLLM/DeepSeek, ``reasoning`` from Ollama) is read
into thinking blocks without a signature.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from tether.core.json_input import parse_model_input
from tether.core.messages import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebSearchError,
    WebSearchToolResultBlock,
)
from tether.providers.base import Completed, ModelRequest, ModelStopReason, TokenUsage, ToolSpec

if TYPE_CHECKING:
    from openai.types import CompletionUsage
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
    )
    from pydantic import BaseModel

_FINISH_REASONS: dict[str, ModelStopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def request_messages(request: ModelRequest) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = []
    system = "\n\n".join(block.text for block in request.system)
    if system:
        out.append({"role": "system", "content": system})
    for message in request.messages:
        out.extend(message_params(message))
    return out


def message_params(message: Message) -> list[ChatCompletionMessageParam]:
    """One of our messages as chat completions messages (none, one, or a user message's
    tool results followed by its other content)."""
    if message.role == "assistant":
        assistant = _assistant_message(message)
        return [assistant] if assistant is not None else []
    return _user_messages(message)


def tool_params(tools: list[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
        if t.server is None  # a provider-side tool (web search) has no equivalent here
    ]


def _assistant_message(message: Message) -> ChatCompletionAssistantMessageParam | None:
    text = "".join(
        b.text
        if isinstance(b, TextBlock)
        else search_note(b)
        if isinstance(b, WebSearchToolResultBlock)
        else ""
        for b in message.content
    )
    calls: list[ChatCompletionMessageFunctionToolCallParam] = [
        {
            "id": use.id,
            "type": "function",
            "function": {"name": use.name, "arguments": json.dumps(use.input)},
        }
        for use in message.tool_uses
    ]
    if not text and not calls:
        return None
    param: ChatCompletionAssistantMessageParam = {"role": "assistant", "content": text or None}
    if calls:
        param["tool_calls"] = calls
    return param


def _user_messages(message: Message) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = [
        {"role": "tool", "tool_call_id": r.tool_use_id, "content": _tool_result_text(r)}
        for r in message.tool_results
    ]
    parts: list[ChatCompletionContentPartParam] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": _data_url(block)}})
        elif isinstance(block, DocumentBlock):
            parts.append({"type": "text", "text": document_text_note(block)})
    if not parts:
        return out
    if all(p["type"] == "text" for p in parts):
        # Plain-string content is what every server understands, including text-only ones.
        text = "\n\n".join(p["text"] for p in parts if p["type"] == "text")
        out.append({"role": "user", "content": text})
    else:
        out.append({"role": "user", "content": parts})
    return out


def document_text_note(document: DocumentBlock) -> str:
    """Chat completions takes no PDFs: the model gets the document's text layer instead."""
    from tether.media.pdf import document_text

    title = f" {document.title}" if document.title else ""
    return f"[PDF{title}, as text]\n{document_text(document.data)}"


def search_note(result: WebSearchToolResultBlock) -> str:
    """What an earlier provider-side web search found, for a model that cannot take the
    search blocks themselves."""
    if isinstance(result.content, WebSearchError):
        return f"\n[web search failed: {result.content.error_code}]\n"
    lines = [f"- {r.title or r.url}: {r.url}" for r in result.content]
    return "\n[web search results:\n" + "\n".join(lines) + "]\n"


def _tool_result_text(result: ToolResultBlock) -> str:
    text = result.text
    images = sum(1 for part in result.content if isinstance(part, ImageBlock))
    notes = [document_text_note(p) for p in result.content if isinstance(p, DocumentBlock)]
    if images:
        notes.append(f"[{images} image(s) omitted: this endpoint takes text-only tool results]")
    for note in notes:
        text = f"{text}\n{note}" if text else note
    return f"[tool error] {text}" if result.is_error else text


def _data_url(image: ImageBlock) -> str:
    return f"data:{image.media_type};base64,{image.data}"


def stop_reason(finish_reason: str | None, *, has_tool_calls: bool) -> ModelStopReason:
    reason = _FINISH_REASONS.get(finish_reason or "", "end_turn")
    # Some servers (older Ollama) report "stop" even when the message holds tool calls.
    if has_tool_calls and reason == "end_turn":
        return "tool_use"
    return reason


def usage(wire: CompletionUsage | None) -> TokenUsage:
    """Our usage from OpenAI's, whose ``prompt_tokens`` include the cached ones."""
    if wire is None:
        return TokenUsage()
    details = wire.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    return TokenUsage(
        input_tokens=max(wire.prompt_tokens - cached, 0),
        output_tokens=wire.completion_tokens,
        cache_read_tokens=cached,
    )


def reasoning(model: BaseModel) -> str:
    """Reasoning text a server put in a non-standard field of a delta or message."""
    extra = model.model_extra or {}
    for name in _REASONING_FIELDS:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def tool_use(id: str, name: str, arguments: str) -> ToolUseBlock:
    parsed, refused = parse_model_input(arguments)
    # Arguments that do not parse were cut off (normally by the length limit): never run.
    return ToolUseBlock(
        id=id, name=name, input=parsed or {}, truncated=parsed is None, refused=refused
    )


def completed_from_response(response: ChatCompletion) -> Completed:
    """The ``Completed`` event for a full (non-streaming) response."""
    if not response.choices:
        return Completed(Message(role="assistant", content=[]), "end_turn", usage(response.usage))
    choice = response.choices[0]
    wire = choice.message
    blocks: list[Block] = []
    thinking = reasoning(wire)
    if thinking:
        blocks.append(ThinkingBlock(thinking=thinking))
    if wire.content:
        blocks.append(TextBlock(text=wire.content))
    calls = [c for c in wire.tool_calls or [] if c.type == "function"]
    for call in calls:
        function = call.function
        blocks.append(tool_use(call.id or fallback_call_id(), function.name, function.arguments))
    reason = stop_reason(choice.finish_reason, has_tool_calls=bool(calls))
    return Completed(Message(role="assistant", content=blocks), reason, usage(response.usage))


def fallback_call_id() -> str:
    """An id for a tool call the server sent without one (some local servers do)."""
    return f"call_{uuid.uuid4().hex[:24]}"
