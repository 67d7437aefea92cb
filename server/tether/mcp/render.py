"""An MCP tool result as the model and the editor see it.

Text stays text, images stay images (the model can look at them), everything else becomes
a short text stand-in. Structured content is shown as JSON only when the server sent no
text: servers are asked to mirror it in a text block, and the model should not read the
same data twice. A result marked ``isError`` reaches the model as an error it can act on.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from tether.core.messages import ImageBlock, ResultPart, TextBlock
from tether.tools.base import ToolResult

MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_OUTPUT_CHARS = 100_000
"""About 25k tokens, Claude Code's default cap for one MCP result."""


def render_result(
    result: types.CallToolResult, *, server: str, max_chars: int = MAX_OUTPUT_CHARS
) -> ToolResult:
    parts: list[ResultPart] = []
    for block in result.content:
        parts.append(_part(block))
    if result.structured_content is not None and not any(
        isinstance(p, TextBlock) and p.text.strip() for p in parts
    ):
        parts.append(TextBlock(text=json.dumps(result.structured_content, ensure_ascii=False)))
    parts = _truncate(parts, max_chars)
    if not parts:
        parts = [TextBlock(text=f"({server} returned no content)")]
    if result.is_error:
        parts = [TextBlock(text=f"The MCP server {server} reported an error:"), *parts]
    return ToolResult(content=parts, is_error=result.is_error, raw_output=_raw(result))


def _part(block: types.ContentBlock) -> ResultPart:
    if isinstance(block, types.TextContent):
        return TextBlock(text=block.text)
    if isinstance(block, types.ImageContent):
        if block.mime_type in MODEL_IMAGE_TYPES:
            return ImageBlock(media_type=block.mime_type, data=block.data)
        return TextBlock(text=f"[image of type {block.mime_type}, {_size(block.data)}]")
    if isinstance(block, types.AudioContent):
        return TextBlock(text=f"[audio of type {block.mime_type}, {_size(block.data)}]")
    if isinstance(block, types.ResourceLink):
        about = f": {block.description}" if block.description else ""
        return TextBlock(text=f"[resource {block.name} at {block.uri}{about}]")
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return TextBlock(text=f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>')
    mime = resource.mime_type or ""
    if mime in MODEL_IMAGE_TYPES:
        return ImageBlock(media_type=mime, data=resource.blob)
    return TextBlock(text=f"[binary resource {resource.uri} ({mime or 'unknown type'})]")


def _size(b64: str) -> str:
    n = len(b64) * 3 // 4
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def _truncate(parts: list[ResultPart], max_chars: int) -> list[ResultPart]:
    """Keep text up to ``max_chars`` in total; say what was cut so the model can narrow."""
    out: list[ResultPart] = []
    left = max_chars
    for part in parts:
        if not isinstance(part, TextBlock):
            out.append(part)
            continue
        if left <= 0:
            continue
        if len(part.text) > left:
            cut = len(part.text) - left
            out.append(TextBlock(text=part.text[:left]))
            out.append(
                TextBlock(
                    text=f"[output truncated: {cut} more characters; ask the tool for less, "
                    "e.g. with a narrower query or pagination]"
                )
            )
            left = 0
            continue
        out.append(part)
        left -= len(part.text)
    return out


def _raw(result: types.CallToolResult) -> Any:
    """What PostToolUse hooks receive: the structured content, else the MCP content."""
    if result.structured_content is not None:
        return result.structured_content
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in result.content]
