"""The Messages API's response JSON as we read it: stream events and whole messages.

Our own small models rather than the SDK's: importing ``anthropic.types`` costs about a
second (3,000 modules), which a cold ``tether -p`` would pay before its first request, and
validating each event into the SDK's union of models costs more than reading these. Fields
keep the API's names; blocks keep every field the API sent (``extra="allow"``), so a server
tool's block goes back to the API as it came.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class WireUsage(_Wire):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class WireBlock(BaseModel):
    """A content block (whole, or as ``content_block_start`` opens it)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str
    text: str = ""
    thinking: str = ""
    signature: str = ""
    data: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] | None = None
    citations: list[dict[str, Any]] | None = None

    def as_sent(self) -> dict[str, Any]:
        """The block as the API sent it (fields it did not send left out)."""
        return self.model_dump(mode="json", exclude_unset=True)


class WireDelta(_Wire):
    """A ``content_block_delta``'s delta, or a ``message_delta``'s."""

    type: str = ""
    text: str = ""
    thinking: str = ""
    signature: str = ""
    partial_json: str = ""
    citation: dict[str, Any] | None = None
    stop_reason: str | None = None


class WireMessage(_Wire):
    """A whole response (``message_start`` carries one with no content yet)."""

    id: str = ""
    content: list[WireBlock] = []
    stop_reason: str | None = None
    usage: WireUsage = WireUsage()


class WireError(_Wire):
    type: str = "error"
    message: str = ""


class WireEvent(_Wire):
    """One server-sent event's data; which fields are set depends on ``type``."""

    type: str
    index: int = 0
    message: WireMessage | None = None
    content_block: WireBlock | None = None
    delta: WireDelta | None = None
    usage: WireUsage | None = None
    error: WireError | None = None


class WireErrorBody(_Wire):
    """The body of an error response: ``{"type": "error", "error": {...}}``."""

    error: WireError | None = None
