"""The diff a file tool shows in the editor: proportionate to the change, not to the file.

A small file is shown whole on both sides, so an editor can open a whole-file diff and review
a turn from it. A big file is shown as the lines that changed with a few unchanged lines
around them, and the line where that region starts: a one-line edit of a 1 MB file then
sends a few hundred bytes to the editor (in the tool call's update, in the permission
question, in the transcript) instead of two megabytes that would have to be encoded and
written on the daemon's event loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tether.core.text_span import context_span, line_count
from tether.protocol.content import DiffContent

WHOLE_FILE_CHARS = 64 * 1024
"""Files up to this size (on both sides) are shown whole."""
CONTEXT_LINES = 3
"""Unchanged lines shown before and after the changed ones, as in a unified diff."""
_HUNK = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")


def diff_content(path: Path, old: str | None, new: str) -> DiffContent:
    """The diff ``old -> new`` of ``path`` (``old`` None: the change creates the file)."""
    uri = path.as_uri()
    if old is None or max(len(old), len(new)) <= WHOLE_FILE_CHARS:
        return DiffContent(uri=uri, old_text=old, new_text=new)
    start, old_end, new_end = context_span(old, new, CONTEXT_LINES)
    if start == 0 and old_end == len(old) and new_end == len(new):
        return DiffContent(uri=uri, old_text=old, new_text=new)
    return DiffContent(
        uri=uri,
        old_text=old[start:old_end],
        new_text=new[start:new_end],
        line=line_count(old, start),
    )


def numbered_as_in_file(unified: Iterable[str], diff: DiffContent) -> list[str]:
    """The lines of a unified diff of ``diff``'s texts, with the hunk headers of a region
    moved down to the region's place in the file."""
    offset = diff.line or 0
    out: list[str] = []
    for line in unified:
        m = _HUNK.match(line) if offset else None
        if m is not None:
            old, new = int(m.group(1)) + offset, int(m.group(3)) + offset
            line = f"@@ -{old}{m.group(2)} +{new}{m.group(4)} @@" + line[m.end() :]
        out.append(line)
    return out
