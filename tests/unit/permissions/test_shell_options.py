"""Options read as GNU getopt_long reads them, and what each command does with its paths."""

from __future__ import annotations

import pytest

from tether.permissions.shell import Word, effects, parse_command
from tether.permissions.shell.options import Options, parse_options

SORT = Options.of("kotST", "output= key= reverse compress-program= check debug")


def words(*texts: str) -> list[Word]:
    return [Word.literal(t) for t in texts]


@pytest.mark.parametrize(
    ("argv", "option", "value"),
    [
        (("-o", "out", "in"), "-o", "out"),
        (("-oout", "in"), "-o", "out"),
        (("-ro", "out", "in"), "-o", "out"),
        (("-rkout", "in"), "-k", "out"),  # the value starts at the first valued letter
        (("--output", "out", "in"), "--output", "out"),
        (("--output=out", "in"), "--output", "out"),
        (("--out=out", "in"), "--output", "out"),
        (("--o", "out", "in"), "--output", "out"),
        (("--compress-prog=x", "in"), "--compress-program", "x"),
        (("in", "--output=out"), "--output", "out"),  # GNU permutes
    ],
)
def test_options_are_read_as_getopt_long_reads_them(
    argv: tuple[str, ...], option: str, value: str
) -> None:
    parsed = parse_options(SORT, words(*argv))
    assert parsed.unknown is None
    assert [w.text for w in parsed.values(option)] == [value]
    assert [w.text for w in parsed.operands] == ["in"]


def test_what_cannot_be_read_is_reported() -> None:
    assert parse_options(SORT, words("--c", "x")).unknown is not None  # check or compress
    assert parse_options(SORT, words("--nope")).unknown is not None
    assert parse_options(SORT, words("-o")).unknown is not None  # a value is missing
    dynamic = [Word("$OPT", None), Word.literal("in")]
    assert parse_options(SORT, dynamic).unknown is not None  # "$OPT" may be --output=x
    quoted_text = [Word("name$x", None)]
    assert parse_options(SORT, quoted_text).unknown is None  # starts with a literal letter


def test_after_double_dash_everything_is_an_operand() -> None:
    parsed = parse_options(SORT, words("--", "-o", "--output=x"))
    assert parsed.options == [] and [w.text for w in parsed.operands] == ["-o", "--output=x"]


@pytest.mark.parametrize(
    ("command", "read_only", "reads", "writes"),
    [
        ("grep -rn pattern src tests", True, ["src", "tests"], []),
        ("grep -e one -e two file", True, ["file"], []),
        ("grep -f patterns.txt file", True, ["patterns.txt", "file"], []),
        ("rg --files src", True, ["src"], []),
        ("head -n 5 a b", True, ["a", "b"], []),
        ("find src -newer ref -name '*.py'", True, ["src", "ref"], []),
        ("find", True, ["."], []),
        ("diff --from-file=base a b", True, ["base", "a", "b"], []),
        ("wc --files0-from=list", True, ["list"], []),
        ("cat < in > /dev/null", True, ["in"], []),
        ("cat in > out", False, ["in"], ["out"]),
        ("git diff --no-index a b", True, ["a", "b"], []),
        ("git log -O order.txt", True, ["order.txt"], []),
        ("git blame --contents=other src/x.py", True, ["other", "src/x.py"], []),
        ("jq -r .a --slurpfile s extra.json data.json", True, ["extra.json", "data.json"], []),
        ("jq -n --args '$ARGS' a b", True, [], []),
        ("awk -v x=1 '{print}' v=2 data.txt", True, ["data.txt"], []),
        ("sed -n -e 1p -e 2p a b", True, ["a", "b"], []),
        ("mkdir -p a/b c", False, [], ["a/b", "c"]),
        ("touch -r ref new", False, ["ref"], ["new"]),
        ("cp -t dest a b", False, ["a", "b"], ["dest"]),
        ("mv a b dir/", False, [], ["dir/", "a", "b"]),
        ("rm -rf x y", False, [], ["x", "y"]),
        ("sed -i.bak s/a/b/ f", False, [], ["f"]),
        ("echo hi >> log", False, [], ["log"]),
    ],
)
def test_the_paths_each_command_reads_and_writes(
    command: str, read_only: bool, reads: list[str], writes: list[str]
) -> None:
    (cmd,) = parse_command(command) or []
    found = effects(cmd)
    assert found.read_only is read_only, found.why
    assert [w.text for w in found.reads] == reads
    assert [w.text for w in (*found.writes, *found.removes)] == writes


@pytest.mark.parametrize(
    ("command", "file_command"),
    [
        ("mkdir -p a", True),
        ("rm -rf a b", True),
        ("rm --no-preserve-root -rf /", False),
        ("rmdir -p a/b", False),
        ("sed -i 's/a/b/' f", True),
        ("sed -i 's/a/b/w out' f", False),
        ("sed -i'../x/*' 's/a/b/' f", False),  # a backup path outside
        ("cp -S /tmp/ a b", False),
        ("mv a", False),
        ('rm "$X"', False),
    ],
)
def test_which_file_commands_are_fully_understood(command: str, file_command: bool) -> None:
    (cmd,) = parse_command(command) or []
    assert effects(cmd).file_command is file_command
