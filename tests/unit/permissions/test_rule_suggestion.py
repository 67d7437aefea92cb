"""The rule an "Allow always" answer saves: the narrowest prefix that covers what the
command is for, or none at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.permissions.bash_suggest import suggest_bash_rule
from tether.permissions.policy import RuleSet, suggest_rule

from .conftest import TOOLS, MakeCtx, decide_on

HEREDOC_COMMIT = (
    "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nCo-Authored-By: T <t@x>\nEOF\n)\""
)


CASES: list[tuple[str, str | None]] = [
    # interpreters: the module or the script, never the bare interpreter
    ("python -m unittest -v", "Bash(python -m unittest:*)"),
    ("python -m pytest -x tests/", "Bash(python -m pytest:*)"),
    ("python3 -m http.server 8000", "Bash(python3 -m http.server:*)"),
    ("python3.12 -m pip install -e .", "Bash(python3.12 -m pip:*)"),
    (".venv/bin/python -m mypy src", "Bash(.venv/bin/python -m mypy:*)"),
    ("python -u -m pytest", "Bash(python -u -m pytest:*)"),
    ("python -W ignore -m pytest", "Bash(python -W ignore -m pytest:*)"),
    ("python manage.py test", "Bash(python manage.py:*)"),
    ("python3 scripts/gen.py --out build", "Bash(python3 scripts/gen.py:*)"),
    ("node scripts/build.js", "Bash(node scripts/build.js:*)"),
    ("ruby bin/setup", "Bash(ruby bin/setup:*)"),
    ("python -c 'print(1)'", None),
    ("python3 -c \"import os; os.system('id')\"", None),
    ("node -e 'process.exit(1)'", None),
    ("node --eval=1", None),
    ("perl -e 'print 1'", None),
    ("ruby -e 'puts 1'", None),
    ("php -r 'echo 1;'", None),
    ("python", None),
    ("python -", None),
    ("python -q --weird-option x.py", None),
    # runners and package managers: the subcommand, and the script it runs
    ("npm test", "Bash(npm test:*)"),
    ("npm test -- --watch=false", "Bash(npm test:*)"),
    ("npm run test", "Bash(npm run test:*)"),
    ("npm run build -- --prod", "Bash(npm run build:*)"),
    ("npm install lodash", "Bash(npm install:*)"),
    ("pnpm test", "Bash(pnpm test:*)"),
    ("pnpm run lint", "Bash(pnpm run lint:*)"),
    ("yarn test --coverage", "Bash(yarn test:*)"),
    ("bun run dev", "Bash(bun run dev:*)"),
    ("cargo test --all", "Bash(cargo test:*)"),
    ("cargo build --release", "Bash(cargo build:*)"),
    ("cargo run --bin server", "Bash(cargo run:*)"),
    ("go test ./...", "Bash(go test:*)"),
    ("go run main.go", "Bash(go run main.go:*)"),
    ("go mod tidy", "Bash(go mod tidy:*)"),
    ("uv run pytest -x", "Bash(uv run pytest:*)"),
    ("uv run python -m pytest", "Bash(uv run python -m pytest:*)"),
    ("uv run python -c 'x'", None),
    ("uv pip install httpx", "Bash(uv pip install:*)"),
    ("poetry run pytest", "Bash(poetry run pytest:*)"),
    ("pip install -r requirements.txt", "Bash(pip install:*)"),
    ("make test", "Bash(make test:*)"),
    ("make", "Bash(make:*)"),
    ("make -j8 build", None),
    ("docker compose up -d", "Bash(docker compose up:*)"),
    ("docker ps", "Bash(docker ps:*)"),
    ("docker run -it ubuntu bash", None),
    ("gh pr list", "Bash(gh pr list:*)"),
    ("cargo --version", "Bash(cargo --version)"),
    # package runners: the package, never the bare runner
    ("npx eslint .", "Bash(npx eslint:*)"),
    ("npx -y prettier --check .", "Bash(npx -y prettier:*)"),
    ("pnpx vitest run", "Bash(pnpx vitest:*)"),
    ("uvx ruff check", "Bash(uvx ruff:*)"),
    ("npx", None),
    ("npx -p cowsay cowsay hi", None),
    # git: the subcommand; nothing for what discards work
    ("git status", "Bash(git status:*)"),
    ("git commit -m 'fix'", "Bash(git commit:*)"),
    (HEREDOC_COMMIT, "Bash(git commit:*)"),
    ("git push origin main", "Bash(git push:*)"),
    ("git stash pop", "Bash(git stash pop:*)"),
    ("git add -A && git add .", "Bash(git add:*)"),
    ("git reset --hard HEAD~1", None),
    ("git push --force", None),
    ("git push origin +main", None),
    ("git clean -fdx", None),
    ("git checkout -- .", None),
    ("git -C ../other commit -m x", None),
    ("git", None),
    # programs that delete or send what their operands name: the exact command
    ("rm -rf build", "Bash(rm -rf build)"),
    ("chmod +x run.sh", "Bash(chmod +x run.sh)"),
    ("curl -s https://example.com/health", "Bash(curl -s https://example.com/health)"),
    ("npm test > out.txt", "Bash(npm test > out.txt)"),
    ("find . -name '*.o' -delete", "Bash(find . -name '*.o' -delete)"),
    ("sed -i 's/a/b/' f.txt", "Bash(sed -i 's/a/b/' f.txt)"),
    ("awk '{print $1}' f | sort > out", None),
    # other programs: the program
    ("ls -la", "Bash(ls:*)"),
    ("pytest -x", "Bash(pytest:*)"),
    ("ruff check .", "Bash(ruff:*)"),
    ("mkdir -p build", "Bash(mkdir:*)"),
    # pipes and lists: read-only parts need no rule
    ("cd frontend && npm test", "Bash(npm test:*)"),
    ("npm test 2>&1 | tail -50", "Bash(npm test:*)"),
    ("pytest -q 2>&1 | grep FAIL | head", "Bash(pytest:*)"),
    ("npm test && npm run lint", None),
    ("make && make install", None),
    # shells, eval, sudo, wrappers, assignments, dynamic names: no rule at all
    ("bash -c 'npm test'", None),
    ("sh scripts/setup.sh", None),
    ("zsh -c ls", None),
    ("eval 'npm test'", None),
    ("source .venv/bin/activate && pytest", None),
    ("sudo apt-get install jq", None),
    ("xargs -n1 rm < list", None),
    ("env NODE_ENV=test npm test", None),
    ("nice -n 10 make", None),
    ("timeout 60 npm test", None),
    ("nohup npm run dev &", None),
    ("FOO=1 npm test", None),
    ("LD_PRELOAD=./x.so npm test", None),
    ("$RUNNER test", None),
    ("f() { npm test; }; f", None),
    ("v=$(cat f); echo $((v))", None),
    ("echo 'unterminated", None),
]


@pytest.mark.parametrize(("command", "rule"), CASES)
def test_suggested_rule(command: str, rule: str | None) -> None:
    assert suggest_bash_rule(command) == rule


def test_there_are_at_least_sixty_cases_and_every_kind_is_covered() -> None:
    assert len(CASES) >= 60
    assert sum(rule is None for _, rule in CASES) >= 20


@pytest.mark.parametrize(
    ("command", "later", "runs_unasked"),
    [
        ("python -m unittest -v", "python -m unittest tests.test_x", True),
        ("python -m unittest -v", "python -c 'import os'", False),
        ("npm run test", "npm run test -- --watch", True),
        ("npm run test", "npm run deploy", False),
        (HEREDOC_COMMIT, "git commit -m 'another'", True),
        (HEREDOC_COMMIT, "git push --force", False),
        ("npx eslint .", "npx some-other-package", False),
    ],
)
async def test_a_saved_rule_covers_the_intent_and_nothing_wider(
    make_ctx: MakeCtx, command: str, later: str, runs_unasked: bool
) -> None:
    rule = suggest_bash_rule(command)
    assert rule is not None
    decision = await decide_on(
        make_ctx(), "Bash", RuleSet.from_strings(allow=[rule]), command=later
    )
    assert (decision.behavior == "allow") is runs_unasked, (rule, later, decision)


async def test_a_reader_outside_the_workspace_suggests_a_read_rule_for_that_file(
    make_ctx: MakeCtx, tmp_path: Path
) -> None:
    outside = tmp_path / "notes.txt"
    outside.write_text("x")
    ctx = make_ctx()
    data = TOOLS["Bash"].parse({"command": f"cat {outside}"})
    rule = suggest_rule(TOOLS["Bash"], data, ctx)
    assert rule == f"Read(/{outside})"
    allowed = RuleSet.from_strings(allow=[rule])
    assert (await decide_on(ctx, "Bash", allowed, command=f"cat {outside}")).behavior == "allow"
    assert (await decide_on(ctx, "Bash", allowed, command="cat /etc/passwd")).behavior == "ask"
