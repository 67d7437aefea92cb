"""Read of images (scaled to the API's limits), PDFs (document blocks, page ranges) and
notebooks (cells with outputs)."""

from __future__ import annotations

import base64
import io
import random
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

from PIL import Image
from pypdf import PdfReader, PdfWriter

from tether.core.messages import DocumentBlock, ImageBlock, TextBlock
from tether.media.images import MAX_EDGE
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.read import READ_TOOL

Run = Callable[..., Awaitable[ToolResult]]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def write_pdf(path: Path, pages: int) -> None:
    writer = PdfWriter()
    for i in range(pages):
        writer.add_blank_page(width=100 + i, height=100)  # page i is 100+i wide: traceable
    with path.open("wb") as f:
        writer.write(f)


def widths(document: DocumentBlock) -> list[int]:
    reader = PdfReader(io.BytesIO(base64.b64decode(document.data)))
    return [int(page.mediabox.width) for page in reader.pages]


async def test_large_image_is_scaled_to_the_api_limit(run: Run, workspace: Path) -> None:
    Image.new("RGB", (4000, 1000), (10, 200, 30)).save(workspace / "wide.png")
    result = await run(READ_TOOL, {"file_path": "wide.png"})
    assert not result.is_error and isinstance(result.content, list)
    image, note = result.content
    assert isinstance(image, ImageBlock) and isinstance(note, TextBlock)
    shown = Image.open(io.BytesIO(base64.b64decode(image.data)))
    assert shown.size == (MAX_EDGE, MAX_EDGE // 4)
    assert "4000x1000" in note.text and f"{MAX_EDGE}x{MAX_EDGE // 4}" in note.text


async def test_heavy_photo_is_recompressed_under_the_byte_limit(run: Run, workspace: Path) -> None:
    noise = Image.frombytes("RGB", (1900, 1900), random.Random(7).randbytes(1900 * 1900 * 3))
    noise.save(workspace / "noise.png")
    assert (workspace / "noise.png").stat().st_size > 3_750_000
    result = await run(READ_TOOL, {"file_path": "noise.png"})
    assert isinstance(result.content, list)
    image = result.content[0]
    assert isinstance(image, ImageBlock) and image.media_type == "image/jpeg"
    assert len(base64.b64decode(image.data)) <= 3_750_000


async def test_small_image_is_sent_unchanged(run: Run, workspace: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGBA", (20, 10), (1, 2, 3, 4)).save(buffer, format="WEBP")
    (workspace / "tiny.webp").write_bytes(buffer.getvalue())
    result = await run(READ_TOOL, {"file_path": "tiny.webp"})
    assert isinstance(result.content, list) and len(result.content) == 1
    image = result.content[0]
    assert isinstance(image, ImageBlock) and image.media_type == "image/webp"
    assert base64.b64decode(image.data) == buffer.getvalue()


async def test_not_an_image_is_an_error(run: Run, workspace: Path) -> None:
    (workspace / "fake.png").write_bytes(b"not really a png")
    result = await run(READ_TOOL, {"file_path": "fake.png"})
    assert result.is_error and "not a readable image" in str(result.content)


async def test_short_pdf_comes_whole_as_a_document(run: Run, workspace: Path) -> None:
    write_pdf(workspace / "short.pdf", 3)
    result = await run(READ_TOOL, {"file_path": "short.pdf"})
    assert not result.is_error and isinstance(result.content, list)
    intro, document = result.content
    assert isinstance(intro, TextBlock) and "all 3 pages" in intro.text
    assert isinstance(document, DocumentBlock) and document.title == "short.pdf"
    assert widths(document) == [100, 101, 102]


async def test_long_pdf_needs_pages_and_gets_exactly_them(run: Run, workspace: Path) -> None:
    write_pdf(workspace / "long.pdf", 30)
    whole = await run(READ_TOOL, {"file_path": "long.pdf"})
    assert whole.is_error and "30 pages" in str(whole.content) and "pages" in str(whole.content)
    part = await run(READ_TOOL, {"file_path": "long.pdf", "pages": "12-14"})
    assert isinstance(part.content, list)
    document = part.content[1]
    assert isinstance(document, DocumentBlock) and widths(document) == [111, 112, 113]
    assert "pages 12-14 of 30" in str(part.content[0])
    too_many = await run(READ_TOOL, {"file_path": "long.pdf", "pages": "1-21"})
    assert too_many.is_error and "at most 20" in str(too_many.content)
    past_end = await run(READ_TOOL, {"file_path": "long.pdf", "pages": "31"})
    assert past_end.is_error and "30 pages" in str(past_end.content)
    not_pdf = await run(READ_TOOL, {"file_path": "short.txt", "pages": "1"})
    assert not_pdf.is_error and "only for PDF" in str(not_pdf.content)


async def test_broken_pdf_is_an_error(run: Run, workspace: Path) -> None:
    (workspace / "broken.pdf").write_bytes(b"%PDF-1.4 nothing else")
    result = await run(READ_TOOL, {"file_path": "broken.pdf"})
    assert result.is_error and "broken.pdf" in str(result.content)


async def test_notebook_shows_cells_with_outputs(
    run: Run, workspace: Path, ctx: ToolContext
) -> None:
    shutil.copy(FIXTURES / "notebooks" / "analysis.ipynb", workspace / "analysis.ipynb")
    result = await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    assert not result.is_error and isinstance(result.content, list)
    text = "\n".join(p.text for p in result.content if isinstance(p, TextBlock))
    assert (
        '<cell id="intro" type="markdown">\n# Sales analysis\nQuarterly numbers.\n</cell>' in text
    )
    assert '<cell id="load" type="code" execution_count="1" language="python">' in text
    assert "<outputs>\n6\n</outputs>" in text  # stream output
    assert "<outputs>\n12\n</outputs>" in text  # execute_result
    assert "ZeroDivisionError: division by zero" in text and "\x1b[" not in text
    images = [p for p in result.content if isinstance(p, ImageBlock)]
    assert len(images) == 1 and images[0].media_type == "image/png"
    # The chart's image comes right after its cell, before the next cell.
    kinds = [type(p).__name__ for p in result.content]
    assert kinds == ["TextBlock", "ImageBlock", "TextBlock"]
    assert ctx.files.get(workspace / "analysis.ipynb") is not None  # NotebookEdit may follow
