"""HTML to Markdown with ``markdownify`` (over BeautifulSoup), minus what is not content."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

_NOT_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "head")
_BLANK_RUNS = re.compile(r"\n{3,}")


def html_to_markdown(html: str) -> str:
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else ""
    for tag in soup(list(_NOT_CONTENT)):
        tag.decompose()
    body = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = _BLANK_RUNS.sub("\n\n", body).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith("# ") else text
