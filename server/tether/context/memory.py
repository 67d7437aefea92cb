"""Long-term memory: a ``MEMORY.md`` index whose entries point at memory files, and a
pluggable relevant-recall step that picks at most a few entries for each request.

The index is an entry point, not the memory itself: one line per entry
(``- [Title](file.md) — what it is about``), at most 200 lines / 25 KB (enforced: the rest
is ignored with a warning).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tether.core.files import read_regular, read_regular_text

MAX_LINES = 200
MAX_BYTES = 25 * 1024
MAX_RECALLED = 5
MAX_ENTRY_CHARS = 4_000
MAX_ENTRY_BYTES = 1 << 20
"""A larger memory entry is skipped, never read whole."""
_ENTRY = re.compile(
    r"^\s*[-*]\s*\[(?P<title>[^\]]+)\]\((?P<target>[^)]+)\)\s*(?:[-—:–]\s*)?(?P<desc>.*)$"
)
_WORD = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class MemoryEntry:
    title: str
    path: Path
    description: str

    @property
    def text(self) -> str:
        return f"{self.title} {self.description} {self.path.stem}"


@dataclass
class MemoryIndex:
    entries: list[MemoryEntry]
    warnings: list[str]


def load_index(path: Path) -> MemoryIndex:
    try:
        raw = read_regular(path, MAX_BYTES + 1)
    except OSError:
        return MemoryIndex([], [])
    warnings: list[str] = []
    if len(raw) > MAX_BYTES:
        warnings.append(f"{path} is larger than {MAX_BYTES // 1024} KB; the rest is ignored")
        raw = raw[:MAX_BYTES]
    lines = raw.decode("utf-8", "replace").splitlines()
    if len(lines) > MAX_LINES:
        warnings.append(f"{path} has more than {MAX_LINES} lines; the rest is ignored")
        lines = lines[:MAX_LINES]
    entries: list[MemoryEntry] = []
    for line in lines:
        m = _ENTRY.match(line)
        if m is None:
            continue
        target = (path.parent / m.group("target").strip()).resolve()
        if target.is_relative_to(path.parent.resolve()):
            entries.append(MemoryEntry(m.group("title").strip(), target, m.group("desc").strip()))
    return MemoryIndex(entries, warnings)


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Recaller(Protocol):
    def recall(self, query: str, entries: Sequence[MemoryEntry], k: int) -> list[MemoryEntry]: ...


class Bm25Recaller:
    """Okapi BM25 over each entry's title, description and file name."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def recall(self, query: str, entries: Sequence[MemoryEntry], k: int) -> list[MemoryEntry]:
        terms = set(tokens(query))
        if not terms or not entries:
            return []
        docs = [Counter(tokens(e.text)) for e in entries]
        average = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
        frequency = Counter(t for d in docs for t in d)
        scores: list[tuple[float, int]] = []
        for i, doc in enumerate(docs):
            length = sum(doc.values())
            score = 0.0
            for term in terms & doc.keys():
                idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
                tf = doc[term]
                score += (
                    idf
                    * tf
                    * (self.k1 + 1)
                    / (tf + self.k1 * (1 - self.b + self.b * length / average))
                )
            if score > 0:
                scores.append((score, i))
        scores.sort(key=lambda s: (-s[0], s[1]))
        return [entries[i] for _score, i in scores[: min(k, MAX_RECALLED)]]


def memory_attachment(chosen: Sequence[MemoryEntry]) -> str:
    parts: list[str] = []
    for entry in chosen:
        try:
            body = read_regular_text(entry.path, max_bytes=MAX_ENTRY_BYTES)[:MAX_ENTRY_CHARS]
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(
            f'<memory title="{entry.title}" path="{entry.path}">\n{body.strip()}\n</memory>'
        )
    if not parts:
        return ""
    return (
        "<system-reminder>\nRelevant memories from earlier sessions:\n"
        + "\n".join(parts)
        + "\n</system-reminder>"
    )
