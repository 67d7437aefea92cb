"""A tool result a PostToolUse hook rewrote (``updatedToolOutput``, ``updatedMCPToolOutput``).

The hook answers in the shape of the ``tool_response`` it was given, or in any simpler one;
each becomes what the model reads in place of the tool's own result:

- a string: that text;
- an MCP ``CallToolResult`` (``{"content": [...]}``) or a list of content blocks: text blocks
  stay text, base64 images stay images, anything else is shown as JSON;
- a shell result (``{"stdout", "stderr", ...}``, as Bash's ``tool_response``): its output;
- anything else: its JSON.
"""

from __future__ import annotations

import json
from typing import Any, cast

from tether.core.messages import ImageBlock, ResultPart, TextBlock
from tether.protocol.content import TextToolContent
from tether.tools.base import ToolResult


def rewritten_result(result: ToolResult, value: Any) -> ToolResult:
    """``result`` with the hook's ``value`` in place of its content (the model's and the
    editor's view alike: the hook may have redacted something)."""
    parts = _parts(value)
    text = "\n".join(p.text for p in parts if isinstance(p, TextBlock))
    return ToolResult(
        content=parts,
        is_error=result.is_error,
        display=[TextToolContent(text=text)],
        raw_output=value,
    )


def _parts(value: Any) -> list[ResultPart]:
    if isinstance(value, str):
        return [TextBlock(text=value)]
    if isinstance(value, dict):
        fields = cast(dict[str, Any], value)
        content = fields.get("content")
        if isinstance(content, list):
            return [_part(b) for b in cast(list[Any], content)] or [TextBlock(text="")]
        if "stdout" in fields or "stderr" in fields:
            streams = [fields.get("stdout"), fields.get("stderr")]
            return [TextBlock(text="\n".join(s for s in streams if isinstance(s, str) and s))]
    if isinstance(value, list):
        return [_part(b) for b in cast(list[Any], value)] or [TextBlock(text="")]
    return [TextBlock(text=_json(value))]


def _part(block: Any) -> ResultPart:
    if isinstance(block, dict):
        fields = cast(dict[str, Any], block)
        if fields.get("type") == "text" and isinstance(fields.get("text"), str):
            return TextBlock(text=fields["text"])
        mime = fields.get("mimeType") or fields.get("media_type")
        if fields.get("type") == "image" and isinstance(fields.get("data"), str) and mime:
            return ImageBlock(media_type=str(mime), data=fields["data"])
    return TextBlock(text=_json(block))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
