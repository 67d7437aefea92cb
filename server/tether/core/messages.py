"""The conversation as the engine keeps it: provider-neutral, Anthropic-shaped messages.

Providers convert these to and from their wire formats; the transcript stores them as-is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _Verbatim(BaseModel):
    """Provider data that must go back exactly as it came: unknown fields are kept."""

    model_config = ConfigDict(frozen=True, extra="allow")


class Citation(_Verbatim):
    """Where a piece of the model's text comes from (a web search result, a document page).
    Opaque to Tether; the API checks the encrypted parts when it gets them back."""

    type: str
    cited_text: str = ""
    url: str | None = None
    title: str | None = None


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str
    citations: tuple[Citation, ...] | None = None
    """Set by the provider on text that cites sources (web search results)."""


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    media_type: str
    data: str
    """Base64-encoded image bytes."""


class DocumentBlock(_Block):
    """A PDF for the model to read (Anthropic's ``document`` block)."""

    type: Literal["document"] = "document"
    media_type: Literal["application/pdf"] = "application/pdf"
    data: str
    """Base64-encoded PDF bytes."""
    title: str | None = None


class ThinkingBlock(_Block):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Block):
    """Thinking the API returned encrypted: sent back verbatim, never shown."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    truncated: bool = False
    """The stream ended before the input JSON was complete: never run, tell the model."""
    refused: str | None = None
    """Why the input as sent could not be taken (``json_input.model_input_problem``); it is
    kept empty, the call never runs, and the model is told."""


class ServerToolUseBlock(_Verbatim):
    """A tool the provider ran on its side during the response (web search). Kept
    verbatim in the history: the API wants it back unchanged, next to its result."""

    type: Literal["server_tool_use"] = "server_tool_use"
    id: str
    name: str
    input: dict[str, Any]


class WebSearchResult(_Verbatim):
    type: Literal["web_search_result"] = "web_search_result"
    url: str
    title: str = ""
    encrypted_content: str = ""
    page_age: str | None = None


class WebSearchError(_Verbatim):
    type: Literal["web_search_tool_result_error"] = "web_search_tool_result_error"
    error_code: str


class WebSearchToolResultBlock(_Verbatim):
    """The results of a server-side web search, as the API sent them."""

    type: Literal["web_search_tool_result"] = "web_search_tool_result"
    tool_use_id: str
    content: list[WebSearchResult] | WebSearchError


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[TextBlock | ImageBlock | DocumentBlock]
    is_error: bool = False

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


ResultPart = TextBlock | ImageBlock | DocumentBlock
ServerBlock = ServerToolUseBlock | WebSearchToolResultBlock
"""Blocks of tools the provider runs itself; only that provider can take them back."""
Block = Annotated[
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock
    | ToolResultBlock,
    Field(discriminator="type"),
]


class Message(BaseModel):
    """One message of the conversation sent to the model."""

    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    content: list[Block]

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


MESSAGES_ADAPTER: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def user_text(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text=text)])


def tool_result(tool_use_id: str, text: str, *, is_error: bool = False) -> ToolResultBlock:
    return ToolResultBlock(
        tool_use_id=tool_use_id, content=[TextBlock(text=text)], is_error=is_error
    )


INTERRUPTED_TOOL_RESULT = "[Request interrupted by user for tool use]"
"""Content of the synthetic result given to a tool_use the user cancelled."""


def unanswered_tool_uses(messages: list[Message]) -> list[ToolUseBlock]:
    """Tool uses in the last assistant message that have no result after them."""
    if not messages:
        return []
    last = messages[-1]
    if last.role == "assistant":
        return last.tool_uses
    if len(messages) >= 2 and messages[-2].role == "assistant":
        answered = {r.tool_use_id for r in last.tool_results}
        return [u for u in messages[-2].tool_uses if u.id not in answered]
    return []
