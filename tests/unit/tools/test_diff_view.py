"""A tool's diff: whole texts for a small file, the changed region with context and its
first line for a big one, whatever the line endings."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tether.core.text_span import context_span, line_count
from tether.tools.diff_view import CONTEXT_LINES, WHOLE_FILE_CHARS, diff_content

PIECES = ["a", "b", "\n", "\r", "\r\n", "é", " "]
FILE = Path("/ws/big.txt")


def big(ending: str = "\n") -> str:
    text = "".join(f"row {i:05d}{ending}" for i in range(WHOLE_FILE_CHARS // 8))
    assert len(text) > WHOLE_FILE_CHARS
    return text


def test_a_small_file_is_shown_whole() -> None:
    diff = diff_content(FILE, "a\nb\n", "a\nc\n")
    assert (diff.old_text, diff.new_text, diff.line) == ("a\nb\n", "a\nc\n", None)


def test_a_created_file_is_shown_whole_however_big() -> None:
    text = big()
    diff = diff_content(FILE, None, text)
    assert (diff.old_text, diff.new_text, diff.line) == (None, text, None)
    assert "line" not in diff.to_wire()


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_big_file_shows_the_changed_lines_with_context(ending: str) -> None:
    old = big(ending)
    new = old.replace(f"row 04000{ending}", f"row 4000, changed{ending}")
    diff = diff_content(FILE, old, new)
    assert diff.line == 4000 - CONTEXT_LINES
    assert diff.old_text == "".join(f"row {i:05d}{ending}" for i in range(3997, 4004))
    assert diff.new_text == diff.old_text.replace("row 04000", "row 4000, changed")
    assert diff.to_wire()["line"] == 3997


def test_changes_at_either_end_of_a_big_file() -> None:
    old = big()
    first = diff_content(FILE, old, "new first line\n" + old)
    assert (first.line, first.old_text, first.new_text) == (
        0,
        "row 00000\nrow 00001\nrow 00002\n",
        "new first line\nrow 00000\nrow 00001\nrow 00002\n",
    )
    last_line = old.count("\n")
    appended = diff_content(FILE, old, old + "tail")
    assert appended.line == last_line - CONTEXT_LINES
    assert appended.new_text == appended.old_text + "tail"


def test_a_big_file_rewritten_whole_is_shown_whole() -> None:
    old = big()
    new = old.upper()
    diff = diff_content(FILE, old, new)
    assert (diff.old_text, diff.new_text, diff.line) == (old, new, None)


def _line_starts(text: str) -> set[int]:
    starts = {0}
    for i, ch in enumerate(text):
        if ch == "\n" or (ch == "\r" and not text.startswith("\n", i + 1)):
            starts.add(i + 1)
    return starts


def test_the_region_splices_back_and_starts_on_shared_lines() -> None:
    rng = random.Random(7)
    for _ in range(2_000):
        old = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        chars = list(old)
        for _ in range(rng.randint(1, 3)):
            chars.insert(rng.randint(0, len(chars)), rng.choice(PIECES))
        new = "".join(chars)
        context = rng.randint(0, 3)
        start, old_end, new_end = context_span(old, new, context)
        assert old[:start] == new[:start] and old[old_end:] == new[new_end:]
        assert old[:start] + new[start:new_end] + old[old_end:] == new
        assert start in _line_starts(old) and start in _line_starts(new)
        assert old_end in _line_starts(old) or old_end == len(old)
        assert line_count(old, start) == line_count(new, start)
