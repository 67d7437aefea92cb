"""Read of images and PDFs: bytes from disk, made to fit the model API, as content blocks.

An image is scaled and re-encoded until it fits (``tether.media.images``); the model is told
when it sees a smaller version. A PDF goes whole when it is short, else by page ranges
(``pages="1-5"``), each range cut into a PDF of its own.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from tether.core.messages import DocumentBlock, ImageBlock, ResultPart, TextBlock
from tether.errors import ToolError
from tether.media.images import ImageError, fit_image
from tether.media.pdf import (
    MAX_BYTES,
    MAX_PAGES_PER_READ,
    MAX_PAGES_WHOLE,
    PdfError,
    extract_pages,
    page_count,
    parse_pages,
)
from tether.tools.base import ToolResult
from tether.tools.paths import SymlinkSwapped, read_bytes_no_symlinks

MAX_SOURCE_BYTES = 100_000_000
"""Files larger than this are not even opened (a PDF or image this big is a mistake)."""


async def _bytes(path: Path, size: int) -> bytes:
    if size > MAX_SOURCE_BYTES:
        raise ToolError(f"{path} is {size} bytes; files over {MAX_SOURCE_BYTES} are not read.")
    try:
        return await asyncio.to_thread(read_bytes_no_symlinks, path)
    except SymlinkSwapped as e:
        raise ToolError(f"{path} changed into a symbolic link after it was checked ({e}).")


async def read_image(path: Path, size: int) -> ToolResult:
    data = await _bytes(path, size)
    try:
        fitted = await asyncio.to_thread(fit_image, data)
    except ImageError as e:
        raise ToolError(f"Cannot show {path}: {e}.")
    parts: list[ResultPart] = [
        ImageBlock(media_type=fitted.media_type, data=base64.b64encode(fitted.data).decode())
    ]
    if fitted.resized:
        w, h = fitted.original
        parts.append(
            TextBlock(
                text=f"[The image is {w}x{h} pixels; shown scaled to "
                f"{fitted.width}x{fitted.height}.]"
            )
        )
    raw = {"type": "image", "bytes": len(fitted.data), "width": fitted.width}
    return ToolResult(content=parts, raw_output=raw)


async def read_pdf(path: Path, size: int, pages: str | None) -> ToolResult:
    data = await _bytes(path, size)
    try:
        wanted = parse_pages(pages) if pages is not None else None
        total = await asyncio.to_thread(page_count, data)
        if wanted is None and total > MAX_PAGES_WHOLE:
            raise ToolError(
                f"{path} has {total} pages, more than the {MAX_PAGES_WHOLE} read at once. "
                f'Read it in ranges with the pages parameter (e.g. pages="1-{MAX_PAGES_WHOLE}"),'
                f" at most {MAX_PAGES_PER_READ} pages per call."
            )
        if wanted is not None:
            data = await asyncio.to_thread(extract_pages, data, wanted)
    except PdfError as e:
        raise ToolError(f"Cannot read {path}: {e}.")
    if len(data) > MAX_BYTES:
        raise ToolError(
            f"The PDF{' pages' if wanted else ''} come to {len(data)} bytes, more than the "
            f"{MAX_BYTES} that can be sent at once. Read fewer pages."
        )
    shown = f"pages {wanted} of {total}" if wanted else f"all {total} pages"
    document = DocumentBlock(data=base64.b64encode(data).decode(), title=path.name)
    parts: list[ResultPart] = [TextBlock(text=f"PDF {path} ({shown}):"), document]
    return ToolResult(content=parts, raw_output={"type": "pdf", "pages": total, "bytes": len(data)})
