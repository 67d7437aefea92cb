"""Content blocks: what a user sends in a prompt and what a tool shows in the editor."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PrivateAttr

from tether.protocol.base import LenientWireModel, WireModel


class Position(LenientWireModel):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(LenientWireModel):
    start: Position
    end: Position


class TextContent(LenientWireModel):
    type: Literal["text"] = "text"
    text: str


PositionEncoding = Literal["utf-8", "utf-16", "utf-32"]
"""What a ``Position.character`` counts (LSP's negotiated encoding)."""


class ResourceLink(LenientWireModel):
    """A file (or a selection in it) the user attached; the daemon reads the live buffer."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    range: Range | None = None
    name: str | None = None
    _encoding: PositionEncoding = PrivateAttr(default="utf-16")

    @property
    def encoding(self) -> PositionEncoding:
        """What ``range``'s characters count: set by the front door that received the link
        (an LSP connection's negotiated encoding; ACP's is UTF-16). Not on the wire."""
        return self._encoding

    def counted_in(self, encoding: PositionEncoding) -> ResourceLink:
        link = self.model_copy()
        link._encoding = encoding
        return link


class ImageContent(LenientWireModel):
    type: Literal["image"] = "image"
    mime_type: str
    data: str


ContentBlock = Annotated[TextContent | ResourceLink | ImageContent, Field(discriminator="type")]


class TextToolContent(WireModel):
    type: Literal["text"] = "text"
    text: str


class DiffContent(WireModel):
    """A file's change. Without ``line`` the texts are the whole file before and after;
    with it they are the region that changed (with some unchanged lines around it), which
    starts at that zero-based line in both the old and the new file."""

    type: Literal["diff"] = "diff"
    uri: str
    old_text: str | None = None
    """``None`` for a file the change created."""
    new_text: str
    line: int | None = Field(default=None, ge=0)


class TerminalContent(WireModel):
    type: Literal["terminal"] = "terminal"
    output: str
    exit_code: int | None = None


ToolContent = Annotated[
    TextToolContent | DiffContent | TerminalContent, Field(discriminator="type")
]


def in_encoding(blocks: list[ContentBlock], encoding: PositionEncoding) -> list[ContentBlock]:
    """``blocks`` with their selections' positions marked as counted in ``encoding``."""
    return [
        b.counted_in(encoding) if isinstance(b, ResourceLink) and b.range is not None else b
        for b in blocks
    ]
