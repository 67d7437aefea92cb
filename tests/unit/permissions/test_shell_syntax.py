"""The shell parser finds every command hiding in a line, and the walker's model of words,
redirections and the code bash runs without a command showing it."""

from __future__ import annotations

import os

import pytest

from tether.permissions.shell import (
    Redirect,
    Word,
    is_read_only_command,
    parse_command,
    parse_script,
)


def argvs(command: str) -> list[tuple[str, ...]] | None:
    parsed = parse_command(command)
    return None if parsed is None else [c.argv for c in parsed]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm test; curl x", [("npm", "test"), ("curl", "x")]),
        ("a && $(curl x)", [("a",), ("curl", "x"), ("$(curl x)",)]),
        ("a || b | c & d", [("a",), ("b",), ("c",), ("d",)]),
        ("echo `curl x`", [("curl", "x"), ("echo", "`curl x`")]),
        ('echo "$(curl x)"', [("curl", "x"), ("echo", "$(curl x)")]),
        ("ls\nrm -rf build\n", [("ls",), ("rm", "-rf", "build")]),
        ("cat <(curl x) >(tee y)", [("curl", "x"), ("tee", "y"), ("cat", "<(curl x)", ">(tee y)")]),
        ("(cd sub; make) | sh", [("cd", "sub"), ("make",), ("sh",)]),
        ("{ ls; rm x; }", [("ls",), ("rm", "x")]),
        ("for f in $(ls); do rm $f; done", [("ls",), ("rm", "$f")]),
        ("if true; then curl x; fi", [("true",), ("curl", "x")]),
        ("while read l; do echo $l; done < f", [("read", "l"), ("echo", "$l")]),
        ("X=$(curl x) ls", [("curl", "x"), ("ls",)]),
        ("echo 'a; rm x' \"b && c\"", [("echo", "a; rm x", "b && c")]),
        ("# only a comment", []),
        ("", []),
        # What bashlex could not read: functions, case, [[ ]], arithmetic, ${…}, heredocs.
        ("f() { rm -rf /; }; f", [("rm", "-rf", "/"), ("f",)]),
        ("case $x in a) rm x;; *) ls;; esac", [("rm", "x"), ("ls",)]),
        ("[[ -f x ]] && rm x", [("[[", "-f", "x", "]]"), ("rm", "x")]),
        ("echo $((1 + $(curl x)))", [("curl", "x"), ("echo", "$((1 + $(curl x)))")]),
        ("echo ${x:-$(curl evil)}", [("curl", "evil"), ("echo", "${x:-$(curl evil)}")]),
        ("cat <<EOF\n$(curl x)\nEOF\n", [("curl", "x"), ("cat",)]),
        ("cat <<'EOF'\n$(curl x)\nEOF\n", [("cat",)]),
        ("cat <<EOF | sh\nid\nEOF\n", [("cat",), ("sh",)]),
        ("cat <<EOF && rm y\na\nEOF\n", [("cat",), ("rm", "y")]),
        ("a[$(id)]=1 ls", [("id",), ("ls",)]),
        ("for ((i=0; i<$(nproc); i++)); do :; done", [("nproc",), (":",)]),
        ("select x in a b; do echo $x; done", [("echo", "$x")]),
        ("time ls; ! grep -q x f", [("time", "ls"), ("grep", "-q", "x", "f")]),
        ("\\rm x; 'rm' y; r\"m\" z", [("rm", "x"), ("rm", "y"), ("rm", "z")]),
    ],
)
def test_every_simple_command_is_found(command: str, expected: list[tuple[str, ...]]) -> None:
    assert argvs(command) == expected


def test_the_heredoc_commit_parses_into_cat_and_git_commit() -> None:
    line = "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nCo-Authored-By: T <t@x>\nEOF\n)\""
    cat, git = parse_command(line) or []
    assert cat.argv == ("cat",) and cat.redirects == (Redirect("<<", Word.literal("EOF")),)
    assert git.argv[:3] == ("git", "commit", "-m")
    assert git.words[3].value is None  # the message is produced at run time


def test_words_are_what_bash_passes() -> None:
    _id, cmd = parse_command("echo ~/x '~/y' *.py \\*.py {a,b} $HOME \"$(id)\" a\\ b") or []
    home = os.path.expanduser("~")
    assert cmd.words[1] == Word("~/x", f"{home}/x")
    assert cmd.words[2] == Word("~/y", "~/y")  # quoted: no tilde expansion
    assert cmd.words[3] == Word("*.py", "*.py", glob=True)
    assert cmd.words[4] == Word("*.py", "*.py")  # escaped: a literal star
    assert cmd.words[5].value is None  # brace expansion makes two words
    assert cmd.words[6].value is None and cmd.words[7].value is None
    assert cmd.words[8] == Word("a b", "a b")


def test_redirections_belong_to_the_command_bash_gives_them() -> None:
    mkdir, echo = parse_command("mkdir -p logs && echo hi > logs/x 2>&1") or []
    assert mkdir.redirects == ()
    assert [r.op for r in echo.redirects] == [">", "2>&"]
    assert echo.redirects[0].writes and not echo.redirects[1].writes
    a, b = parse_command("{ a; b; } > out") or []
    assert a.redirects == b.redirects == (Redirect(">", Word.literal("out")),)


def test_loops_and_function_bodies_are_marked_as_repeating() -> None:
    before, loop, call = parse_command("ls; for i in 1 2; do cd x; done; f() { cd y; }") or []
    assert not before.repeats and loop.repeats and call.repeats


@pytest.mark.parametrize(
    "command",
    [
        "echo 'unterminated",
        "ls )",
        "if then fi",
        "cat <<EOF\n`id`\nEOF\n",  # a backtick in an unquoted heredoc the grammar skips
        "cat <<EOF\n$[1+2]\nEOF\n",
        "exec 3<>/tmp/x",
        "echo \x00",
    ],
)
def test_what_cannot_be_read_is_none_and_never_read_only(command: str) -> None:
    assert parse_command(command) is None
    assert not is_read_only_command(command)


@pytest.mark.parametrize(
    ("command", "hazard"),
    [
        # bash evaluates a subscript in a variable name these builtins are given
        ("test -v 'a[$(id)]'", True),
        ("[ -v 'a[$(id)]' ]", True),
        ("[[ -v a[$(id)] ]]", True),
        ("printf -v 'a[$(id)]' x", True),
        ("read 'a[$(id)]'", True),
        ("mapfile -t 'a[$(id)]'", True),
        ("unset 'a[$(id)]'", True),
        ("declare -p 'a[$(id)]'", True),
        ("export 'a[$(id)]=1'", True),
        ("wait -p 'a[$(id)]'", True),
        ("test -v name", False),
        ("read -r line", False),
        ("local x=1 y", False),
        # arithmetic on a value the same line takes from outside
        ("for x in $(cat f); do echo $((x)); done", True),
        ("read v < f; echo ${arr[v]}", True),
        ("v=$(cat f); [[ $v -eq 1 ]]", True),
        ("v=$(cat f); echo ${s:v}", True),
        ("echo $(( $(cat f) + 1 ))", True),
        ("x=$(cat f); echo ${!x}", True),
        ("p=$(cat f); echo ${p@P}", True),
        ("let 'a[$(id)]'", True),
        ("for i in 1 2 3; do echo $((i * 2)); done", False),
        ("i=0; echo $((i + 1))", False),
        ("echo $((RANDOM % 6)) ${#PATH} ${HOME:0:4}", False),
        ("[[ $x -eq 1 ]] && (( y > 2 ))", False),  # the environment's values are trusted
    ],
)
def test_code_no_command_shows_is_a_hazard(command: str, hazard: bool) -> None:
    script = parse_script(command)
    assert script is not None
    assert (script.hazard is not None) is hazard, script.hazard
    if hazard:
        assert not is_read_only_command(command)
