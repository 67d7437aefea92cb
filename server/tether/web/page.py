"""What a fetch returns (kept free of the HTTP client so it is cheap to import)."""

from __future__ import annotations

from dataclasses import dataclass


class FetchError(Exception):
    """The page could not be fetched; the message says why and what to try."""


@dataclass(frozen=True)
class Page:
    url: str
    """The URL that answered (after same-host redirects)."""
    status: int
    content_type: str
    text: str
    """Markdown for HTML, the body for other text types."""
    size: int
    """Bytes of the body as received."""


@dataclass(frozen=True)
class CrossHostRedirect:
    url: str
    location: str
    status: int
