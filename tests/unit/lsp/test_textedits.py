"""Minimal edits: the shared lines at both ends are set aside, the edits still turn the old
text into the new one, touch only what changed and never split a CRLF pair."""

from __future__ import annotations

import random

import pytest

from tether.core.text_span import changed_span
from tether.lsp.textedits import (
    BIG_EDIT_CHARS,
    Edit,
    Encoding,
    Pos,
    apply_edits,
    minimal_edits,
    minimal_edits_off_loop,
    split_lines,
)

PIECES = ["a", "b", "\n", "\r", "\r\n", "é", "𝄞", " "]
ENCODINGS: tuple[Encoding, ...] = ("utf-16", "utf-8", "utf-32")


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(0, 3)):
        at = rng.randint(0, len(chars))
        roll = rng.random()
        if roll < 0.4:
            chars[at:at] = list("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4))))
        elif roll < 0.8:
            del chars[at : at + rng.randint(1, 4)]
        else:
            chars[at : at + 1] = list(rng.choice(PIECES))
    return "".join(chars)


def test_random_edits_turn_the_old_text_into_the_new_one():
    rng = random.Random(15)
    for _ in range(3000):
        old = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        new = mutate(rng, old)
        for encoding in ENCODINGS:
            edits = minimal_edits(old, new, encoding)
            assert apply_edits(old, edits, encoding) == new, (old, new, edits)
            assert (edits == []) == (old == new)


def test_the_span_starts_and_ends_on_lines_both_texts_share():
    rng = random.Random(16)
    for _ in range(3000):
        old = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        new = mutate(rng, old)
        start, old_end, new_end = changed_span(old, new)
        assert old[:start] == new[:start]
        assert old[old_end:] == new[new_end:]
        assert start <= old_end and start <= new_end
        lines = split_lines(old[:start])
        assert lines[-1] == "", "the span starts at a line start"
        assert not old[:start].endswith("\r") or not old[start:].startswith("\n")
        assert not new[:start].endswith("\r") or not new[start:].startswith("\n")
        for text, end in ((old, old_end), (new, new_end)):
            if end < len(text):
                assert end == 0 or text[end - 1] in "\r\n"
                assert not (text[end - 1 : end] == "\r" and text[end] == "\n")


def big_file() -> str:
    return "".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(20_000))


def test_a_one_word_change_in_a_big_file_is_one_small_edit():
    old = big_file()
    new = old.replace("line 12345 ", "line 12345 renamed ", 1)
    assert minimal_edits(old, new) == [Edit(Pos(12345, 11), Pos(12345, 11), "renamed ")]
    shorter = old.replace("line 00007 " + "x" * 40 + "\n", "", 1)
    assert minimal_edits(old, shorter) == [Edit(Pos(7, 0), Pos(8, 0), "")]
    appended = old + "tail"
    assert minimal_edits(old, appended) == [Edit(Pos(20_000, 0), Pos(20_000, 0), "tail")]


def test_crlf_pairs_are_never_split():
    old = "one\r\ntwo\r\nthree\r\n"
    new = "one\r\ntwo\rX\nthree\r\n"
    edits = minimal_edits(old, new)
    assert apply_edits(old, edits) == new
    for edit in edits:
        for pos in (edit.start, edit.end):
            line = split_lines(old)[pos.line] if pos.line < len(split_lines(old)) else ""
            assert not (line[: pos.character].endswith("\r") and line[pos.character :] == "\n")


@pytest.mark.parametrize("size", [10, BIG_EDIT_CHARS])
async def test_off_the_loop_gives_the_same_edits(size: int):
    old = ("abc\n" * size)[: size * 2]
    new = old[:size] + "changed\n" + old[size:]
    assert await minimal_edits_off_loop(old, new) == minimal_edits(old, new)
