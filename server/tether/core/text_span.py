"""Where two texts differ, in whole lines, found fast enough for a 1 MB file.

The lines both texts share at the start and at the end are found with slice comparisons
(4 KiB at a time, then a binary search), so a one-line change in a 20k-line file costs a
millisecond or two. Lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as LSP counts them. The
editor bridge diffs only the span between them; a tool's diff shows it with some context.
"""

from __future__ import annotations

_CHUNK = 4096


def changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in ``old``, end in ``new``): the lines outside are the same in both;
    each bound is the start of a line in both texts."""
    start = _line_start_before(old, new, _common_prefix(old, new))
    room = min(len(old), len(new)) - start
    same = _line_start_after(old, new, _common_suffix(old, new, room))
    return start, len(old) - same, len(new) - same


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i : i + _CHUNK] == b[i : i + _CHUNK]:
        i += _CHUNK
    if i >= n:
        return n
    lo, hi = i, min(i + _CHUNK, n)  # a[:lo] == b[:lo]; they differ before hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    la, lb = len(a), len(b)
    i = 0
    while (
        i < limit
        and a[la - min(i + _CHUNK, limit) : la - i] == b[lb - min(i + _CHUNK, limit) : lb - i]
    ):
        i = min(i + _CHUNK, limit)
    if i >= limit:
        return limit
    lo, hi = i, min(i + _CHUNK, limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _starts_line(text: str, i: int) -> bool:
    if i == 0:
        return True
    before = text[i - 1]
    return before == "\n" or (before == "\r" and (i >= len(text) or text[i] != "\n"))


def _line_start_before(old: str, new: str, i: int) -> int:
    """The last position at or before ``i`` (inside the common prefix) that starts a line
    in both texts."""
    while i > 0 and not (_starts_line(old, i) and _starts_line(new, i)):
        i = max(old.rfind("\n", 0, i - 1), old.rfind("\r", 0, i - 1)) + 1
    return i


def _line_start_after(old: str, new: str, same: int) -> int:
    """The longest common suffix, at most ``same`` characters, that starts a line in both."""
    lo, ln = len(old), len(new)
    while same > 0 and not (_starts_line(old, lo - same) and _starts_line(new, ln - same)):
        at = lo - same
        ends = [j for j in (old.find("\n", at, lo), old.find("\r", at, lo)) if j >= 0]
        same = lo - (min(ends) + 1) if ends else 0
    return same


def line_count(text: str, end: int) -> int:
    """Lines that end before ``end`` (a line start: never between \\r and \\n)."""
    return text.count("\n", 0, end) + text.count("\r", 0, end) - text.count("\r\n", 0, end)


def context_span(old: str, new: str, context: int) -> tuple[int, int, int]:
    """``changed_span`` widened by up to ``context`` unchanged lines on each side."""
    start, old_end, _ = changed_span(old, new)
    for _ in range(context):
        if start == 0:
            break
        start = _line_start_before(old, new, start - 1)
    same = len(old) - old_end  # the common suffix starts a line in both texts
    for _ in range(context):
        if same == 0:
            break
        same = len(old) - _next_line_start(old, len(old) - same)
    return start, len(old) - same, len(new) - same


def _next_line_start(text: str, i: int) -> int:
    """The start of the line after the one that starts at ``i`` (the end of the text if
    that line is the last)."""
    ends = [j for j in (text.find("\n", i), text.find("\r", i)) if j >= 0]
    if not ends:
        return len(text)
    j = min(ends)
    return j + 2 if text.startswith("\r\n", j) else j + 1
