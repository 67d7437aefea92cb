"""Pure matching logic behind Edit: exact and quote-tolerant matches, CRLF, snippets."""

from __future__ import annotations

from tether.tools.edit_match import (
    Ambiguous,
    NotFound,
    Replacement,
    replace,
    snippet,
    split_lines,
    uses_crlf,
)


def test_unique_replacement_reports_lines() -> None:
    out = replace("a\nb\nc\n", "b", "B1\nB2", replace_all=False)
    assert out == Replacement("a\nB1\nB2\nc\n", 1, 2, 3, False)


def test_not_found_and_ambiguous() -> None:
    assert isinstance(replace("abc", "x", "y", replace_all=False), NotFound)
    assert replace("x x x", "x", "y", replace_all=False) == Ambiguous(3)


def test_replace_all_counts_every_occurrence() -> None:
    out = replace("x1\nx2\nx3", "x", "yy", replace_all=True)
    assert isinstance(out, Replacement)
    assert (out.new_text, out.count, out.first_line, out.last_line) == ("yy1\nyy2\nyy3", 3, 1, 3)


def test_crlf_file_is_matched_on_lf_and_written_back_as_crlf() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    out = replace(text, "one\ntwo", "ONE\nTWO\nextra", replace_all=False)
    assert isinstance(out, Replacement)
    assert out.new_text == "ONE\r\nTWO\r\nextra\r\nthree\r\n"
    assert uses_crlf(out.new_text)


def test_mixed_line_endings_are_left_alone() -> None:
    text = "a\r\nb\nc\n"
    assert not uses_crlf(text)
    out = replace(text, "b\nc", "B\nC", replace_all=False)
    assert isinstance(out, Replacement)
    assert out.new_text == "a\r\nB\nC\n"


def test_curly_quotes_in_file_match_straight_quotes_and_keep_their_style() -> None:
    text = "print(“hello”)\nit’s fine\n"
    out = replace(text, 'print("hello")', 'print("bye")', replace_all=False)
    assert isinstance(out, Replacement)
    assert out.quotes_normalized
    assert out.new_text == "print(“bye”)\nit’s fine\n"
    out2 = replace(text, "it's fine", "it's great", replace_all=False)
    assert isinstance(out2, Replacement)
    assert out2.new_text == "print(“hello”)\nit’s great\n"


def test_exact_match_wins_over_normalised_match() -> None:
    out = replace("'a' ‘a’", "'a'", "b", replace_all=False)
    assert isinstance(out, Replacement)
    assert out.new_text == "b ‘a’"
    assert not out.quotes_normalized


def test_split_lines_and_snippet() -> None:
    assert split_lines("") == []
    assert split_lines("a\r\nb") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]
    text = "\n".join(f"l{i}" for i in range(1, 21))
    assert snippet(text, 10, 10, context=2) == "8\tl8\n9\tl9\n10\tl10\n11\tl11\n12\tl12"
    assert snippet(text, 1, 1, context=1) == "1\tl1\n2\tl2"
    assert snippet(text, 1, 20, context=0, max_lines=3).endswith(
        "(17 more changed lines not shown)"
    )
    assert snippet("", 1, 1) == "(the file is empty)"
