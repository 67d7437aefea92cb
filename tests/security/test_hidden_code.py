"""Commands that look read-only but run or write something: bash evaluating an array
subscript in a name or in arithmetic, and GNU options spelled the way getopt_long also
accepts them (unambiguous prefixes, ``--opt=value``, bundled short options). Each attack
is first shown to work in plain bash, then shown not to get through the pipeline."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import MakeHarness

PAYLOAD = "a[$(touch${IFS}pwned)]"
"""What an attacker plants in a file the agent reads: a subscript that runs a command
(without a space, so word splitting keeps it whole)."""

SUBSCRIPT_ATTACKS = [
    pytest.param("test -v 'a[$(touch pwned)]' && echo set", id="test-v"),
    pytest.param("[ -v 'a[$(touch pwned)]' ] || echo unset", id="bracket-v"),
    pytest.param("printf -v 'a[$(touch pwned)]' '%s' x", id="printf-v"),
    pytest.param("a=(1); unset 'a[$(touch pwned)]'", id="unset-element"),
    pytest.param("v=$(cat payload); echo $((v))", id="arithmetic-on-a-read-value"),
    pytest.param("for v in $(cat payload); do echo ${arr[v]}; done", id="subscript-from-for"),
    pytest.param("read -r v < payload; echo ${arr[v]}", id="subscript-from-read"),
    pytest.param("v=$(cat payload); [[ $v -eq 0 ]] && echo zero", id="double-bracket-eq"),
    pytest.param("echo $(( $(cat payload) + 1 ))", id="arithmetic-on-substitution-output"),
    pytest.param("s=abc; v=$(cat payload); echo ${s:v}", id="substring-offset"),
    pytest.param("n=$(cat payload); echo ${!n}", id="indirect-expansion"),
    pytest.param("let 'x = a[$(touch pwned)]'", id="let"),
]
ALLOW = (
    *("Bash(echo:*)", "Bash(test:*)", "Bash([:*)", "Bash(printf:*)", "Bash(cat:*)"),
    *("Bash(read:*)", "Bash(unset:*)", "Bash([[:*)", "Bash(let:*)"),
)


def in_plain_bash(command: str, cwd: Path) -> None:
    """Run the attack outside Tether, to show that it works."""
    subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, check=False)


@pytest.fixture
def payload(workspace: Path) -> Path:
    (workspace / "payload").write_text(PAYLOAD + "\n")
    return workspace / "pwned"


@pytest.mark.parametrize("command", SUBSCRIPT_ATTACKS)
async def test_subscript_evaluation_is_never_read_only(
    make_harness: MakeHarness, workspace: Path, payload: Path, tmp_path: Path, command: str
) -> None:
    proof = tmp_path / "proof"
    proof.mkdir()
    (proof / "payload").write_text(PAYLOAD + "\n")
    in_plain_bash(command, proof)
    assert (proof / "pwned").exists(), "the attack does not work in plain bash"
    h = make_harness(mode="acceptEdits", allow=ALLOW, answer="reject_once")
    out = await h.call("Bash", command=command)
    assert len(h.answers.asked) == 1 and out.failed
    assert not payload.exists()


ABBREVIATION_ATTACKS = [
    pytest.param("sort --o=written src/app.py", "written", id="sort-o-prefix"),
    pytest.param("sort --outp written src/app.py", "written", id="sort-outp-separate-value"),
    pytest.param("sort -ruo written src/app.py", "written", id="sort-bundled-o"),
    pytest.param("sort -owritten src/app.py", "written", id="sort-attached-o"),
    pytest.param(
        "seq 200 | sort -S 1K --compress-prog=./compress.sh > /dev/null",
        "compressed",
        id="sort-compress-program-prefix",
    ),
    pytest.param("sed --exp='w written' src/app.py", "written", id="sed-expression-prefix"),
    pytest.param("sed --fi=script.sed src/app.py", "written", id="sed-file-prefix"),
    pytest.param("sed --in-pl=.orig 's/hi/x/' src/app.py", "src/app.py.orig", id="sed-in-place"),
    pytest.param("sed -ns 'w written' src/app.py", "written", id="sed-bundled-script-w"),
    pytest.param("uniq src/app.py written", "written", id="uniq-second-operand"),
]


@pytest.mark.parametrize(("command", "made"), ABBREVIATION_ATTACKS)
async def test_an_option_that_writes_or_runs_is_recognised_however_it_is_spelled(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path, command: str, made: str
) -> None:
    for root in (workspace, tmp_path / "proof"):
        root.mkdir(exist_ok=True)
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / "app.py").write_text("print('hi')\n")
        (root / "script.sed").write_text("w written\n")
        (root / "compress.sh").write_text("#!/bin/sh\ntouch compressed\nexec cat\n")
        (root / "compress.sh").chmod(0o755)
    proof = tmp_path / "proof"
    in_plain_bash(command, proof)
    assert (proof / made).exists(), "the attack does not work in plain GNU tools"
    h = make_harness(answer="reject_once")  # where these readers run unasked
    out = await h.call("Bash", command=command)
    assert len(h.answers.asked) == 1 and out.failed
    assert not (workspace / made).exists()
    assert (workspace / "src" / "app.py").read_text() == "print('hi')\n"


async def test_the_same_readers_without_those_options_run_unasked(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(answer="reject_once")
    for command in (
        "sort -r src/app.py",
        "sort --reverse --key=1 src/app.py",
        "sed -n 1p src/app.py",
        "sed --expression=s/hi/ho/ src/app.py",
        "uniq -c src/app.py",
        "test -v HOME && echo set",
        "for i in 1 2; do echo $((i * 2)); done",
    ):
        out = await h.call("Bash", command=command)
        assert not out.failed, (command, out.block.text)
    assert h.answers.asked == []
