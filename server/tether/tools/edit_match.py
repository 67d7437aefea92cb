"""Pure text matching for Edit: locate ``old_string``, splice in ``new_string``, show the result.

No I/O here, so the LSP layer can reuse it to turn an edit into a workspace edit. Matching is
exact first; when that finds nothing, curly and straight quotes are treated as equal (models
often type straight quotes where the file has typographic ones). The quote map is one
character to one character, so a span found in the normalised text is the same span in the
original. Files with CRLF line endings are matched on their LF form and converted back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_QUOTES = str.maketrans(
    {"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'}
)
_OPENERS = frozenset(" \t\n([{<-—–")


def normalize_quotes(text: str) -> str:
    return text.translate(_QUOTES)


def uses_crlf(text: str) -> bool:
    """True when every line break is CRLF (mixed files are matched as they are)."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf == text.count("\n")


@dataclass(frozen=True)
class Replacement:
    new_text: str
    count: int
    first_line: int
    """1-based line of ``new_text`` where the first replaced text starts."""
    last_line: int
    """1-based line of ``new_text`` where the last replaced text ends."""
    quotes_normalized: bool


@dataclass(frozen=True)
class NotFound:
    pass


@dataclass(frozen=True)
class Ambiguous:
    count: int


EditOutcome = Replacement | NotFound | Ambiguous


def occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    """Non-overlapping spans of ``needle`` in ``text``, left to right."""
    spans: list[tuple[int, int]] = []
    if not needle:
        return spans
    start = text.find(needle)
    while start != -1:
        spans.append((start, start + len(needle)))
        start = text.find(needle, start + len(needle))
    return spans


def find_spans(text: str, needle: str) -> tuple[list[tuple[int, int]], bool]:
    """Spans of ``needle``; the flag says the match needed quote normalisation."""
    spans = occurrences(text, needle)
    if spans:
        return spans, False
    spans = occurrences(normalize_quotes(text), normalize_quotes(needle))
    return spans, bool(spans)


def replace(text: str, old: str, new: str, *, replace_all: bool) -> EditOutcome:
    """Replace ``old`` by ``new`` in ``text``: once (it must be unique) or everywhere."""
    crlf = uses_crlf(text)
    if crlf or "\r" not in text:
        # The model writes LF; a CRLF file is edited in its LF form and converted back.
        work, old, new = (s.replace("\r\n", "\n") for s in (text, old, new))
    else:
        work = text
    spans, normalized = find_spans(work, old)
    if not spans:
        return NotFound()
    if len(spans) > 1 and not replace_all:
        return Ambiguous(len(spans))
    pieces: list[str] = []
    cursor = length = 0
    first_start = last_end = -1
    for start, end in spans:
        pieces.append(work[cursor:start])
        length += start - cursor
        replacement = match_quote_style(work[start:end], new) if normalized else new
        if first_start < 0:
            first_start = length
        pieces.append(replacement)
        length += len(replacement)
        last_end = length
        cursor = end
    pieces.append(work[cursor:])
    result = "".join(pieces)
    first_line = result.count("\n", 0, first_start) + 1
    last_line = result.count("\n", 0, max(first_start, last_end - 1)) + 1
    if crlf:
        result = result.replace("\n", "\r\n")
    return Replacement(result, len(spans), first_line, last_line, normalized)


def match_quote_style(original: str, new: str) -> str:
    """Give ``new`` the curly quotes that ``original`` (the matched file text) uses."""
    curly_double = "“" in original or "”" in original
    curly_single = "‘" in original or "’" in original
    if not (curly_double or curly_single):
        return new
    out: list[str] = []
    for i, ch in enumerate(new):
        prev = new[i - 1] if i > 0 else " "
        opening = prev in _OPENERS
        if ch == '"' and curly_double:
            out.append("“" if opening else "”")
        elif ch == "'" and curly_single:
            out.append("‘" if opening else "’")
        else:
            out.append(ch)
    return "".join(out)


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on LF, CR of CRLF dropped, no phantom last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def format_numbered(lines: Sequence[str], first_number: int) -> str:
    """``<n>\\t<line>`` per line, like ``cat -n`` without the padding."""
    return "\n".join(f"{first_number + i}\t{line}" for i, line in enumerate(lines))


def snippet(
    text: str,
    first_line: int,
    last_line: int,
    *,
    context: int = 4,
    max_lines: int = 60,
    max_line_chars: int = 500,
) -> str:
    """Numbered lines ``first_line - context .. last_line + context`` of ``text``."""
    lines = split_lines(text)
    if not lines:
        return "(the file is empty)"
    start = max(1, first_line - context)
    end = min(len(lines), last_line + context)
    shown = [
        line if len(line) <= max_line_chars else line[:max_line_chars] + "…"
        for line in lines[start - 1 : end]
    ]
    hidden = max(0, len(shown) - max_lines)
    body = format_numbered(shown[:max_lines], start)
    if hidden:
        body += f"\n… ({hidden} more changed lines not shown)"
    return body
