"""Lines the first parser refused (and so asked about even when every part was allowed)
now run without a question when their parts are allowed: heredoc commit messages,
arithmetic, ``[[ ]]``, ``case``, functions, loops, parameter expansions. Each one is
checked by what it leaves on disk; the user, if asked, would say no."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import MakeHarness, text_of

ALLOW = ("Bash(touch:*)", "Bash(echo:*)", "Bash(printf:*)", "Bash(npm test:*)")

EVERYDAY = [
    pytest.param("[[ -d src ]] && touch made", id="double-bracket-test"),
    pytest.param("case src in s*) touch made;; *) echo no;; esac", id="case"),
    pytest.param('mk() { touch "$1"; }; mk made', id="function"),
    pytest.param("echo $((6 * 7)) > /dev/null && touch made", id="arithmetic-expansion"),
    pytest.param("(( 2 > 1 )) && touch made", id="arithmetic-command"),
    pytest.param("for i in 1 2; do touch made; done", id="for-loop"),
    pytest.param("n=0; while (( n < 1 )); do n=1; done; touch made", id="while-arithmetic"),
    pytest.param("touch ${NAME:-made}", id="parameter-default"),
    pytest.param(
        "printf '%s\\n' \"$(cat <<'EOF'\nnotes\nEOF\n)\" > /dev/null; touch made",
        id="heredoc-in-substitution",
    ),
    pytest.param("cat <<EOF > /dev/null\nplain $HOME text\nEOF\ntouch made", id="unquoted-heredoc"),
    pytest.param("if [ -f src/app.py ]; then touch made; else echo none; fi", id="if-else"),
    pytest.param("{ echo start; touch made; } 2>&1 | tail -1", id="group-into-pipe"),
]


@pytest.mark.parametrize("command", EVERYDAY)
async def test_allowed_parts_run_without_a_question(
    make_harness: MakeHarness, workspace: Path, command: str
) -> None:
    h = make_harness(allow=ALLOW, answer="reject_once")
    out = await h.call("Bash", command=command)
    assert h.answers.asked == [], command
    assert not out.failed and (workspace / "made").exists(), text_of(out)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("[[ -d src ]] && rm -rf src", id="double-bracket-hides-rm"),
        pytest.param("case x in x) rm -rf src;; esac", id="case-hides-rm"),
        pytest.param("mk() { rm -rf src; }; mk", id="function-body-hides-rm"),
        pytest.param("touch ${X:-$(rm -rf src)}", id="default-hides-rm"),
        pytest.param("echo $(( $(rm -rf src; echo 1) + 1 ))", id="arithmetic-hides-rm"),
        pytest.param("cat <<EOF\n$(rm -rf src)\nEOF", id="heredoc-hides-rm"),
    ],
)
async def test_the_same_constructs_hiding_another_program_still_ask(
    make_harness: MakeHarness, workspace: Path, command: str
) -> None:
    h = make_harness(allow=ALLOW, answer="reject_once")
    await h.call("Bash", command=command)
    assert len(h.answers.asked) == 1 and (workspace / "src" / "app.py").exists()
