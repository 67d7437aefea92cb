"""Turn the user's content blocks (text, attached files and selections, images) into the
message the model reads. Attached files are read through the Editor, so unsaved text wins."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from tether.core.messages import Block, ImageBlock, Message, TextBlock
from tether.core.wellformed import has_lone_surrogate, well_formed
from tether.editor.port import Editor
from tether.protocol.content import (
    ContentBlock,
    ImageContent,
    Position,
    PositionEncoding,
    Range,
    ResourceLink,
    TextContent,
)


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        raise ValueError(f"only file: URIs are supported, got {uri}")
    return Path(unquote(parsed.path))


def well_formed_blocks(blocks: Sequence[ContentBlock]) -> list[ContentBlock]:
    """The blocks with each lone surrogate in their text (an undecodable byte of argv or
    stdin, a ``\\udfff`` escape on the wire) replaced by U+FFFD: the Messages API refuses
    such text, and a prompt it refused would stay in the history and refuse every turn."""
    out: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, TextContent) and has_lone_surrogate(block.text):
            block = block.model_copy(update={"text": well_formed(block.text)})
        elif isinstance(block, ResourceLink) and has_lone_surrogate(f"{block.uri}{block.name}"):
            name = block.name and well_formed(block.name)
            block = block.model_copy(update={"uri": well_formed(block.uri), "name": name})
        out.append(block)
    return out


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
    if link.range is None:
        lines = doc.text.splitlines()
        numbered = "\n".join(f"{i + 1}\t{line}" for i, line in enumerate(lines))
        return f'<attached-file path="{path}">\n{numbered}\n</attached-file>'
    return _selection(path, doc.text, link.range, link.encoding)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Line breaks as LSP counts them (not ``str.splitlines``'s wider set)."""


def _selection(path: Path, text: str, span: Range, encoding: PositionEncoding) -> str:
    """Whole lines when the range spans whole lines (numbered, like Read shows them), or
    the cursor's line for an empty range; otherwise exactly the selected characters, with
    where they start and end."""
    lines = _LINE_BREAK.split(text)
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]

    def locate(at: Position) -> tuple[int, int]:
        """(line, column) of an LSP position, clamped to the text."""
        if at.line >= len(lines):
            return len(lines) - 1, len(lines[-1])
        return at.line, column_of(lines[at.line], at.character, encoding)

    (first, first_col), (last, last_col) = sorted((locate(span.start), locate(span.end)))
    ends_a_line = (last_col == 0 and last > first) or last_col == len(lines[last])
    if (first_col == 0 and ends_a_line) or (first, first_col) == (last, last_col):
        if last_col == 0 and last > first:
            last -= 1  # the range ends at the start of the line after the last one
        picked = lines[first : last + 1]
        numbered = "\n".join(f"{first + i + 1}\t{line}" for i, line in enumerate(picked))
        where = f"{path} (lines {first + 1}-{last + 1})"
        return f'<attached-file path="{where}">\n{numbered}\n</attached-file>'
    selected = text[starts[first] + first_col : starts[last] + last_col]
    where = (
        f"{path} (from line {first + 1} column {first_col + 1} "
        f"to line {last + 1} column {last_col + 1}, exclusive)"
    )
    return f'<attached-file path="{where}" selection="exact">\n{selected}\n</attached-file>'


def column_of(line: str, character: int, encoding: PositionEncoding) -> int:
    """The index in ``line`` of an LSP ``character`` counted in ``encoding`` code units (a
    count past the end of the line means its end, as LSP says; one inside a character
    takes that character in)."""
    if encoding == "utf-32":
        return min(character, len(line))
    counted = 0
    for i, ch in enumerate(line):
        if counted >= character:
            return i
        counted += (
            len(ch.encode("utf-8")) if encoding == "utf-8" else (2 if ord(ch) > 0xFFFF else 1)
        )
    return len(line)
