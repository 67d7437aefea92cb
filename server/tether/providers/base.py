"""The provider interface: one streaming request in, typed stream events out.

A provider turns a ``ModelRequest`` into a stream of ``StreamEvent``s ending in exactly one
``Completed``. Faults it cannot recover from are raised as ``ModelError`` (or
``PromptTooLongError``); retries with backoff and the non-streaming fallback happen inside
the provider and are reported as ``Retrying`` / ``StreamReset`` events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tether.core.messages import (
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    ThinkingBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
)
from tether.providers.models import ModelLimits

ModelStopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"
]


@dataclass(frozen=True)
class SystemBlock:
    text: str
    cache: bool = False
    """Put a prompt-caching breakpoint after this block."""


@dataclass(frozen=True)
class WebSearchOptions:
    """The provider's own web search, offered to the model for one request."""

    max_uses: int = 8
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    """Only one of the two lists may be set (the API refuses both)."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    server: WebSearchOptions | None = None
    """Set for a tool the provider runs on its side: sent in the provider's own shape, and
    left out by providers that have no such tool."""


@dataclass(frozen=True)
class ModelRequest:
    model: str
    system: list[SystemBlock]
    messages: list[Message]
    tools: list[ToolSpec]
    max_tokens: int = 16000
    cache_history: bool = True
    """Put a caching breakpoint on the newest message so the next request reads it."""
    thinking: bool = True
    """Let the model think, where it can and the settings allow (off for summaries)."""


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ThinkingReady:
    """A thinking block is complete with its signature (kept verbatim for the history)."""

    block: ThinkingBlock | RedactedThinkingBlock


@dataclass(frozen=True)
class ToolUseStarted:
    """The model began a tool_use block; its input is still streaming."""

    id: str
    name: str


@dataclass(frozen=True)
class ToolUseReady:
    """A tool_use block is complete (input parsed); it may start before the message ends."""

    block: ToolUseBlock


@dataclass(frozen=True)
class ServerToolStarted:
    """The provider began running one of its own tools (a web search)."""

    block: ServerToolUseBlock


@dataclass(frozen=True)
class ServerToolFinished:
    """The result of a provider-side tool arrived."""

    block: WebSearchToolResultBlock


@dataclass(frozen=True)
class Retrying:
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class Waiting:
    """The request is sent and nothing has come back yet (a model loading, a hung server)."""

    where: str
    """The URL waited on."""
    waited_s: float
    limit_s: float
    """When the request is given up."""

    @property
    def words(self) -> str:
        return f"waiting for {self.where} ({self.waited_s:.0f} s, up to {self.limit_s:g} s)…"


@dataclass(frozen=True)
class StreamReset:
    """The stream broke; what was streamed so far is void and a retry follows."""

    reason: str


@dataclass(frozen=True)
class Completed:
    message: Message
    stop_reason: ModelStopReason
    usage: TokenUsage = field(default_factory=TokenUsage)


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ThinkingReady
    | ToolUseStarted
    | ToolUseReady
    | ServerToolStarted
    | ServerToolFinished
    | Retrying
    | Waiting
    | StreamReset
    | Completed
)


class Provider(Protocol):
    """A model endpoint. ``stream`` is an async generator of events ending in ``Completed``."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def context_window(self) -> int: ...

    @property
    def limits(self) -> ModelLimits:
        """Window and output limits in force (the model's, with the user's overrides)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def discover_window(self, *, again: bool = False) -> None:
        """Ask the server for its window where it reports one (once; ``again`` when there
        are signs it changed: a prompt that came back cut). A no-op where nothing is asked."""
        ...

    async def aclose(self) -> None: ...
