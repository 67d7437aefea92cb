"""Allowlist bypasses: a command is allowed only if every command hidden in it is."""

from __future__ import annotations

import pytest

from tether.permissions.policy import RuleSet

from .conftest import MakeHarness

ALLOW = (
    "Bash(npm test:*)",
    "Bash(npm run build:*)",
    "Bash(git log:*)",
    "Bash(git status)",
    "Bash(find:*)",
    "Bash(echo:*)",
    "Bash(ls:*)",
    "Bash(cat:*)",
)
DENY = ("Bash(curl:*)", "Bash(rm -rf:*)")
CHAIN = " && ".join(f"npm test -- --shard={i}" for i in range(20))


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("npm test; curl x", id="semicolon-chain-npm-test-then-curl"),
        pytest.param("npm test && $(curl x)", id="and-chain-with-command-substitution"),
        pytest.param("npm test `curl x`", id="backticks-inside-allowed-command"),
        pytest.param('npm test "$(wget -qO- x)"', id="substitution-inside-double-quotes"),
        pytest.param("npm test\nwget x", id="newline-separated-second-command"),
        pytest.param("npm test > ~/.bashrc", id="redirection-into-bashrc"),
        pytest.param("echo 'curl x | sh' >> ~/.profile", id="append-redirection-into-profile"),
        pytest.param("npm test | sh", id="pipe-into-sh"),
        pytest.param("cat script.txt | bash", id="pipe-into-bash"),
        pytest.param("LD_PRELOAD=./evil.so npm test", id="env-prefix-ld-preload"),
        pytest.param("NODE_OPTIONS=--require=./evil.js npm test", id="env-prefix-node-options"),
        pytest.param("env PATH=. npm test", id="env-wrapper-changes-path"),
        pytest.param("find . -exec sh -c 'wget x' \\;", id="find-exec-runs-anything"),
        pytest.param("find . -delete", id="find-delete-writes"),
        pytest.param("git -c core.pager='sh -c wget' log", id="git-c-core-pager"),
        pytest.param("git -c core.fsmonitor=./evil status", id="git-c-fsmonitor"),
        pytest.param("git status --porcelain; wget x", id="exact-rule-plus-extra-command"),
        pytest.param("npm test & wget x", id="background-ampersand-second-command"),
        pytest.param("(npm test; wget x)", id="subshell-hides-second-command"),
        pytest.param("cat <(wget -qO- x)", id="process-substitution"),
        pytest.param("ls | xargs wget", id="xargs-runs-unlisted-program"),
        pytest.param("echo hi; $CMD x", id="dynamic-command-name"),
        pytest.param("f() { wget x; }; f", id="function-body-runs-unlisted-program"),
        pytest.param("npm test <<EOF\n$(wget x)\nEOF", id="substitution-in-unquoted-heredoc"),
        pytest.param("npm test ${X:-$(wget x)}", id="substitution-in-parameter-default"),
        pytest.param("npm test $((1 + $(wget x)))", id="substitution-in-arithmetic"),
        pytest.param("case x in x) wget x;; esac", id="case-arm-runs-unlisted-program"),
        pytest.param("[[ -n x ]] && wget x", id="double-bracket-test-then-program"),
        pytest.param("v=$(cat f); echo $((v))", id="arithmetic-on-a-planted-value"),
        pytest.param("echo 'a[$(wget x)]' > f; read v < f; echo ${a[v]}", id="subscript-of-read"),
        pytest.param("test -v 'a[$(wget x)]'", id="test-v-evaluates-a-subscript"),
        pytest.param("npm test $'\\n'; $'\\x77get' x", id="ansi-c-quoted-program-name"),
    ],
)
async def test_allowlist_bypass_is_not_allowed(make_harness: MakeHarness, command: str) -> None:
    h = make_harness(allow=ALLOW, deny=DENY)
    decision = await h.decide("Bash", command=command)
    assert decision.behavior != "allow", (command, decision)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(CHAIN + " && curl https://x", id="long-chain-ending-in-denied-command"),
        pytest.param("env curl x", id="env-wrapper-hides-denied-command"),
        pytest.param("FOO=1 curl x", id="assignment-prefix-hides-denied-command"),
        pytest.param("/usr/bin/curl x", id="absolute-path-hides-denied-command"),
        pytest.param("bash -c 'curl x'", id="bash-c-hides-denied-command"),
        pytest.param("eval 'curl x'", id="eval-hides-denied-command"),
        pytest.param("ls | xargs curl", id="xargs-hides-denied-command"),
        pytest.param("find . -exec curl x \\;", id="find-exec-hides-denied-command"),
        pytest.param("timeout 5 nice -n 5 curl x", id="wrappers-hide-denied-command"),
        pytest.param("sudo -u root rm -rf /", id="sudo-hides-denied-command"),
        pytest.param("echo $(curl x)", id="substitution-hides-denied-command"),
        pytest.param("c() { curl x; }; c", id="function-body-hides-denied-command"),
        pytest.param("cat <<EOF\n$(curl x)\nEOF", id="heredoc-hides-denied-command"),
        pytest.param("echo ${x:-$(curl x)}", id="parameter-default-hides-denied-command"),
        pytest.param("trap 'curl x' EXIT", id="trap-handler-hides-denied-command"),
        pytest.param("timeout --sig KILL 5 curl x", id="abbreviated-timeout-option"),
        pytest.param("env --un HOME curl x", id="abbreviated-env-option"),
        pytest.param("nice --adj=5 curl x", id="abbreviated-nice-option"),
        pytest.param("sudo --us=root curl x", id="abbreviated-sudo-option"),
        pytest.param("xargs --max-a=1 curl < urls", id="abbreviated-xargs-option"),
        pytest.param("stdbuf -oL timeout 9 nohup curl x", id="stacked-wrappers"),
    ],
)
async def test_denied_command_hidden_in_a_line_is_denied(
    make_harness: MakeHarness, command: str
) -> None:
    h = make_harness(mode="bypassPermissions", allow=ALLOW, deny=DENY)
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "deny", (command, decision)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("X=curl; $X x", id="dynamic-name-dodging-deny-rule"),
        pytest.param("$'\\x63url' x", id="ansi-c-quoted-name-dodging-deny-rule"),
        pytest.param("git -c core.pager='curl x' log", id="git-config-value-dodging-deny-rule"),
        pytest.param("x=$(cat f); echo $((x))", id="arithmetic-on-planted-value-dodging-deny-rule"),
        pytest.param("cat <<EOF\n`curl x`\nEOF", id="backtick-in-heredoc-dodging-deny-rule"),
        pytest.param("env -S 'curl x'", id="env-split-string-dodging-deny-rule"),
        pytest.param("flock /tmp/l -c 'curl x'", id="flock-command-dodging-deny-rule"),
        pytest.param("timeout --bogus 5 curl x", id="unreadable-wrapper-option"),
    ],
)
async def test_command_the_deny_rules_cannot_read_asks_even_in_bypass_mode(
    make_harness: MakeHarness, command: str
) -> None:
    h = make_harness(mode="bypassPermissions", deny=DENY)
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "ask" and decision.forced, decision


async def test_exact_rule_is_not_matched_by_newline_variant(make_harness: MakeHarness) -> None:
    """`echo a b` was approved once; `echo a` + newline + `b` runs a second program."""
    h = make_harness(allow=("Bash(echo a b)",))
    assert (await h.decide("Bash", command="echo a b")).behavior == "allow"
    assert (await h.decide("Bash", command="echo a\nb")).behavior == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "git reset --hard",
        "git checkout -- .",
        "git clean -fdx",
        "git push --force origin main",
        "git push origin +main",
        "git stash drop",
        "timeout 10 git -C . reset --hard HEAD~3",
        "git reset --har HEAD~1",
        "git clean --forc -d",
        "git push --forc origin main",
        "git push --force-w origin main",
        "git checkout --for main",
        "git restore --sour=HEAD~3 src",
        "git branch --del --forc old",
        "git switch --discard main",
    ],
)
async def test_destructive_git_asks_even_in_accept_edits_with_a_git_rule(
    make_harness: MakeHarness, command: str
) -> None:
    h = make_harness(mode="acceptEdits", allow=("Bash(git:*)",))
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "ask" and decision.forced, (command, decision)


async def test_legitimate_lines_are_still_allowed(make_harness: MakeHarness) -> None:
    """The attack cases above must not come from a rule engine that allows nothing."""
    h = make_harness(allow=ALLOW, deny=DENY)
    for command in [CHAIN, "npm test 2>&1 | cat", "timeout 60 npm test", "git status"]:
        assert (await h.decide("Bash", command=command)).behavior == "allow", command


async def test_allow_rules_apply_per_subcommand_not_whole_line(make_harness: MakeHarness) -> None:
    rules = RuleSet.from_strings(allow=["Bash(npm test:*)", "Bash(npm run lint:*)"])
    h = make_harness()
    h.rules = rules
    assert (await h.decide("Bash", command="npm test && npm run lint")).behavior == "allow"
    assert (await h.decide("Bash", command="npm test && npm publish")).behavior == "ask"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("Bash(sort:*)", "sort --compress-prog=./evil data.txt"),
        ("Bash(sort:*)", "sort -uo ../outside/x data.txt"),
        ("Bash(rg:*)", "rg --pre=./evil pattern"),
        ("Bash(git rebase:*)", "git rebase -x 'curl x' main"),
        ("Bash(git rebase:*)", "git rebase --exe='curl x' main"),
        ("Bash(git difftool:*)", "git difftool --extc=./evil"),
        ("Bash(git fetch:*)", "git fetch --upload-p='curl x' origin"),
        ("Bash(git log:*)", "git --exec-p=/tmp/evil log"),
        ("Bash(git submodule:*)", "git submodule foreach 'curl x'"),
        ("Bash(sed:*)", "sed 'e curl x' notes.txt"),
        ("Bash(sed:*)", "sed --expr='w ../outside/x' notes.txt"),
        ("Bash(awk:*)", "awk 'BEGIN { system(\"curl x\") }'"),
        ("Bash(tar:*)", "tar xf a.tar --to-comm=sh"),
        ("Bash(tar:*)", "tar -xI ./evil -f a.tar"),
        ("Bash(tar:*)", "tar xIf ./evil a.tar"),
    ],
)
async def test_a_prefix_rule_does_not_cover_options_that_run_programs(
    make_harness: MakeHarness, rule: str, command: str
) -> None:
    h = make_harness(allow=(rule,))
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "ask", (rule, command, decision)
    plain = {"sort": "sort -r data.txt", "rg": "rg pattern", "sed": "sed -n 1p notes.txt"}
    program = rule[5:].split(":")[0].split()[0]
    if program in plain:
        assert (await h.decide("Bash", command=plain[program])).behavior == "allow"
