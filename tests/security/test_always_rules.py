"""What "Allow always" saves, seen from the question the user gets and the rule remembered:
the narrow rule is shown in the question, and with no rule narrow enough there is no
"always" choice and nothing is saved."""

from __future__ import annotations

import pytest

from .conftest import MakeHarness


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("python -m unittest -v", "Bash(python -m unittest:*)"),
        ("npm run test -- --ci", "Bash(npm run test:*)"),
        ("cargo test --all", "Bash(cargo test:*)"),
        ("git commit -m 'x'", "Bash(git commit:*)"),
    ],
)
async def test_the_question_names_the_narrow_rule_that_is_saved(
    make_harness: MakeHarness, command: str, rule: str
) -> None:
    h = make_harness(answer="allow_always")
    await h.call("Bash", command=command)
    (request,) = h.answers.asked
    assert request.always_rule == rule
    assert any(rule in o.name for o in request.options() if o.kind == "allow_always")
    assert h.remembered == [("allow", rule)]


@pytest.mark.parametrize(
    "command",
    [
        "python -c 'import os'",
        "bash -c 'npm test'",
        "eval 'npm test'",
        "sudo make install",
        "ls | xargs -n1 npm test",
        "timeout 60 npm test",
        "npm test && npm run lint",
        "git reset --hard HEAD~1",
    ],
)
async def test_no_always_choice_and_nothing_saved_without_a_narrow_rule(
    make_harness: MakeHarness, command: str
) -> None:
    h = make_harness(answer="allow_always")
    await h.call("Bash", command=command)
    (request,) = h.answers.asked
    assert request.always_rule is None
    assert [o.kind for o in request.options()] == ["allow_once", "reject_once"]
    assert h.remembered == []
