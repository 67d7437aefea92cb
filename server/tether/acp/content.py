"""Content blocks both ways: a prompt's ACP blocks into Tether's, and a stored user
message back into ACP chunks for ``session/load``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote, urlparse

import acp.schema as wire

from tether.protocol.content import (
    ContentBlock,
    ImageContent,
    Position,
    Range,
    ResourceLink,
    TextContent,
)

AcpPromptBlock = (
    wire.TextContentBlock
    | wire.ImageContentBlock
    | wire.AudioContentBlock
    | wire.ResourceContentBlock
    | wire.EmbeddedResourceContentBlock
)
_LINES = re.compile(r"L(\d+)(?:[:-]L?(\d+))?")
"""A line span in a mention's fragment, as Zed writes it: ``#L10:20``."""


def prompt_blocks(prompt: Sequence[AcpPromptBlock]) -> list[ContentBlock]:
    """Embedded resources become a mention plus a context block at the end, as Claude
    Code reads them; file links are read by the engine through the editor (unsaved text)."""
    blocks: list[ContentBlock] = []
    context: list[ContentBlock] = []
    for block in prompt:
        if isinstance(block, wire.TextContentBlock):
            blocks.append(TextContent(text=block.text))
        elif isinstance(block, wire.ImageContentBlock):
            blocks.append(ImageContent(mime_type=block.mime_type, data=block.data))
        elif isinstance(block, wire.ResourceContentBlock):
            blocks.append(_link(block.uri, block.name))
        elif isinstance(block, wire.EmbeddedResourceContentBlock):
            res = block.resource
            blocks.append(TextContent(text=f"[@{_basename(res.uri)}]({res.uri})"))
            if isinstance(res, wire.TextResourceContents):
                text = f'<context ref="{res.uri}">\n{res.text}\n</context>'
                context.append(TextContent(text=text))
        else:
            blocks.append(TextContent(text="(an audio attachment was left out: not supported)"))
    return blocks + context


def _link(uri: str, name: str) -> ContentBlock:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return TextContent(text=f"[@{name}]({uri})")
    lines = _LINES.fullmatch(parsed.fragment)
    span: Range | None = None
    if lines is not None:
        first = int(lines.group(1)) - 1
        last = int(lines.group(2) or lines.group(1))
        span = Range(
            start=Position(line=max(first, 0), character=0), end=Position(line=last, character=0)
        )
    return ResourceLink(uri=parsed._replace(fragment="").geturl(), name=name, range=span)


def _basename(uri: str) -> str:
    return unquote(urlparse(uri).path).rstrip("/").rpartition("/")[2] or uri


def user_chunks(content: Sequence[ContentBlock]) -> list[wire.UserMessageChunk]:
    """A user message as ACP replays it: one chunk per block."""
    out: list[wire.UserMessageChunk] = []
    for block in content:
        item: wire.TextContentBlock | wire.ImageContentBlock | wire.ResourceContentBlock
        if isinstance(block, TextContent):
            item = wire.TextContentBlock(type="text", text=block.text)
        elif isinstance(block, ImageContent):
            item = wire.ImageContentBlock(type="image", data=block.data, mime_type=block.mime_type)
        else:
            name = block.name or _basename(block.uri)
            item = wire.ResourceContentBlock(type="resource_link", uri=block.uri, name=name)
        out.append(wire.UserMessageChunk(session_update="user_message_chunk", content=item))
    return out
