"""PDFs for the model: page counts, page ranges cut into a smaller PDF, and plain text for
providers that take no documents. pypdf does the parsing."""

from __future__ import annotations

import base64
import binascii
import io
import re
from dataclasses import dataclass
from functools import lru_cache

from pypdf import PdfReader, PdfWriter
from pypdf.errors import PdfReadError

MAX_PAGES_PER_READ = 20
"""Pages one read may return (Claude Code's limit for the ``pages`` parameter)."""
MAX_PAGES_WHOLE = 10
"""A PDF longer than this must be read in page ranges."""
MAX_BYTES = 20_000_000
"""Bytes of one document block: well inside the API's 32 MB request limit."""
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


class PdfError(ValueError):
    """The PDF cannot be read, or the request for it is malformed."""


@dataclass(frozen=True)
class PageRange:
    first: int
    """1-based, inclusive."""
    last: int

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def parse_pages(text: str) -> PageRange:
    """``"3"`` or ``"1-5"`` (1-based, inclusive)."""
    match = _RANGE.match(text)
    if match is None:
        raise PdfError(f'pages must look like "3" or "1-5", not {text!r}')
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first < 1 or last < first:
        raise PdfError(f"the page range {text!r} is empty or starts before page 1")
    if last - first + 1 > MAX_PAGES_PER_READ:
        raise PdfError(f"at most {MAX_PAGES_PER_READ} pages can be read at once, not {text!r}")
    return PageRange(first, last)


def _reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfError("the PDF is encrypted with a password")
        _ = len(reader.pages)
        return reader
    except PdfReadError as e:
        raise PdfError(f"the file is not a readable PDF ({e})") from None


def page_count(data: bytes) -> int:
    return len(_reader(data).pages)


def extract_pages(data: bytes, pages: PageRange) -> bytes:
    """A new PDF with only ``pages`` of ``data``."""
    reader = _reader(data)
    total = len(reader.pages)
    if pages.first > total:
        raise PdfError(f"the PDF has {total} pages; page {pages.first} does not exist")
    writer = PdfWriter()
    for index in range(pages.first - 1, min(pages.last, total)):
        writer.add_page(reader.pages[index])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@lru_cache(maxsize=16)
def document_text(b64: str) -> str:
    """The text layer of a base64 PDF, page by page. Cached by the string: a history sends
    the same document object on every request."""
    try:
        data = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return "[the PDF could not be read: bad base64 data]"
    return pdf_text(data)


def pdf_text(data: bytes) -> str:
    try:
        reader = _reader(data)
        pages = [page.extract_text() or "" for page in reader.pages]
    except PdfError as e:
        return f"[the PDF could not be read: {e}]"
    return "\n\n".join(f"--- page {i + 1} ---\n{text.strip()}" for i, text in enumerate(pages))
