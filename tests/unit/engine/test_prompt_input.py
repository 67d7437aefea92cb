"""Attached selections reach the model as exactly their range, in the sender's encoding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.editor.disk import DiskEditor
from tether.engine.prompt_input import column_of, prompt_to_message
from tether.protocol.content import (
    Position,
    PositionEncoding,
    Range,
    ResourceLink,
    in_encoding,
)

# "naïve" has a 2-byte UTF-8 letter; "𝒻" is outside the BMP (2 UTF-16 units, 4 UTF-8 bytes).
SOURCE = "def naïve(𝒻, x):\r\n    return 𝒻(x) + 1\n\nprint(naïve)\n"


def span(a: tuple[int, int], b: tuple[int, int]) -> Range:
    return Range(start=Position(line=a[0], character=a[1]), end=Position(line=b[0], character=b[1]))


async def attached(tmp_path: Path, where: Range, encoding: PositionEncoding) -> str:
    path = tmp_path / "m.py"
    path.write_bytes(SOURCE.encode())
    (link,) = in_encoding([ResourceLink(uri=path.as_uri(), range=where)], encoding)
    return (await prompt_to_message([link], DiskEditor())).text


@pytest.mark.parametrize(
    ("encoding", "start", "end"),
    [
        # "𝒻(x)" on line 1: columns 11..15 in code points.
        ("utf-32", 11, 15),
        ("utf-16", 11, 16),
        ("utf-8", 11, 18),
    ],
)
async def test_a_characterwise_selection_is_exactly_its_range(
    tmp_path: Path, encoding: PositionEncoding, start: int, end: int
) -> None:
    text = await attached(tmp_path, span((1, start), (1, end)), encoding)
    body = text.split("\n")[1:-1]
    assert body == ["𝒻(x)"]
    assert "from line 2 column 12 to line 2 column 16, exclusive" in text


async def test_a_selection_across_lines_keeps_its_line_breaks(tmp_path: Path) -> None:
    # From "naïve(" (after "def ") to the end of "return" on the next line, in UTF-8 bytes.
    text = await attached(tmp_path, span((0, 4), (1, 10)), "utf-8")
    assert "\nnaïve(𝒻, x):\r\n    return\n" in text
    assert "from line 1 column 5 to line 2 column 11" in text


async def test_whole_lines_stay_numbered_lines(tmp_path: Path) -> None:
    text = await attached(tmp_path, span((1, 0), (3, 0)), "utf-16")
    assert "(lines 2-3)" in text
    assert "\n2\t    return 𝒻(x) + 1\n3\t\n" in text
    # A range ending at the end of its last line is whole lines too.
    to_end = await attached(tmp_path, span((3, 0), (3, 12)), "utf-16")
    assert "(lines 4-4)" in to_end and "\n4\tprint(naïve)\n" in to_end


async def test_an_empty_selection_gives_the_cursor_line(tmp_path: Path) -> None:
    text = await attached(tmp_path, span((3, 3), (3, 3)), "utf-8")
    assert "(lines 4-4)" in text and "\n4\tprint(naïve)\n" in text


async def test_positions_past_the_text_are_clamped(tmp_path: Path) -> None:
    text = await attached(tmp_path, span((3, 6), (40, 2)), "utf-16")
    assert text.split("\n")[1:-1] == ["naïve)", ""]


async def test_a_reversed_range_is_read_forwards(tmp_path: Path) -> None:
    text = await attached(tmp_path, span((1, 16), (1, 11)), "utf-16")
    assert text.split("\n")[1:-1] == ["𝒻(x)"]


def test_a_position_inside_a_character_takes_the_character_in() -> None:
    assert column_of("aïb", 2, "utf-8") == 2  # between the two bytes of "ï"
    assert column_of("a𝒻b", 2, "utf-16") == 2  # between the surrogates of "𝒻"
    assert column_of("ab", 9, "utf-16") == 2
