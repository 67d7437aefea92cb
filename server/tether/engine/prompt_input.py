"""Turn the user's content blocks (text, attached files and selections, images) into the
message the model reads. Attached files are read through the Editor, so unsaved text wins."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from tether.core.messages import Block, ImageBlock, Message, TextBlock
from tether.editor.port import Editor
from tether.protocol.content import ContentBlock, ImageContent, ResourceLink, TextContent


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        raise ValueError(f"only file: URIs are supported, got {uri}")
    return Path(unquote(parsed.path))


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextContent))


async def prompt_to_message(blocks: Sequence[ContentBlock], editor: Editor) -> Message:
    content: list[Block] = []
    for block in blocks:
        if isinstance(block, TextContent):
            content.append(TextBlock(text=block.text))
        elif isinstance(block, ImageContent):
            content.append(ImageBlock(media_type=block.mime_type, data=block.data))
        else:
            content.append(TextBlock(text=await _attachment(block, editor)))
    if not content:
        content.append(TextBlock(text="(empty message)"))
    return Message(role="user", content=content)


async def _attachment(link: ResourceLink, editor: Editor) -> str:
    try:
        # The user chose this file; resolve its symlinks so the no-symlink open accepts it.
        path = Path(os.path.realpath(uri_to_path(link.uri)))
        doc = await editor.read(path)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        return (
            f"<system-reminder>The user attached {link.uri}, but it could not be read: "
            f"{e}</system-reminder>"
        )
    lines = doc.text.splitlines()
    if link.range is not None:
        first, last = link.range.start.line, link.range.end.line
        if link.range.end.character == 0 and last > first:
            last -= 1
        picked = lines[first : last + 1]
        numbered = "\n".join(f"{first + i + 1}\t{line}" for i, line in enumerate(picked))
        where = f"{path} (lines {first + 1}-{first + len(picked)})"
    else:
        numbered = "\n".join(f"{i + 1}\t{line}" for i, line in enumerate(lines))
        where = str(path)
    return f'<attached-file path="{where}">\n{numbered}\n</attached-file>'
