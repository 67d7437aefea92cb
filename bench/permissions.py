"""Permission costs: rule evaluation for a 20-subcommand shell line against 200 rules
(target < 1 ms), and the start overhead of the bubblewrap sandbox for `true`.

Rule evaluation is the full ``decide()`` for a Bash call (deny, ask, control plane,
destructive git, allow per subcommand) on a line the daemon has already parsed — every
call is parsed once and looked at several times (flags, rules, display). The first sight
of a new line, bashlex parse included, is reported separately.

    python bench/permissions.py [--runs 200] [--sandbox-runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import summary

from tether.editor.disk import DiskEditor
from tether.permissions.policy import RuleSet, decide
from tether.permissions.shell import _parse_cached  # pyright: ignore[reportPrivateUsage]
from tether.sandbox import BwrapSandbox, probe
from tether.tasks.registry import TaskRegistry
from tether.tools.bash import BASH_TOOL
from tether.tools.context import SessionRunState, ToolConfig, ToolContext, Wrap
from tether.tools.shell import run_shell

LINE = " && ".join(
    [f"npm run test -- --shard={i}/19 --reporter=dot 2>&1" for i in range(19)]
    + ["git log --oneline -n 5 | head -3"]
)


def two_hundred_rules() -> RuleSet:
    allow = [f"Bash(tool{i} run:*)" for i in range(80)]
    allow += [f"Bash(cmd{i} * --flag)" for i in range(20)]
    allow += [f"Read(./docs/{i}/**)" for i in range(20)]
    allow += ["Bash(npm run test:*)", "Bash(git log:*)", "Bash(head:*)"]
    ask = [f"Bash(deploy{i}:*)" for i in range(30)] + [f"Edit(/conf/{i}.yml)" for i in range(7)]
    deny = [f"Bash(danger{i}:*)" for i in range(30)] + [f"Read(./secret{i}/**)" for i in range(10)]
    rules = RuleSet.from_strings(allow, ask, deny)
    assert len(rules.allow) + len(rules.ask) + len(rules.deny) == 200
    return rules


def context(root: Path, tasks: TaskRegistry) -> ToolContext:
    return ToolContext(
        session_id="bench",
        tool_use_id="b",
        cwd=root,
        editor=DiskEditor(),
        state=SessionRunState(),
        config=ToolConfig(shell_sandbox=BwrapSandbox(root)),
        tasks=tasks,
        emit=lambda _u: None,
    )


async def rules_bench(root: Path, runs: int) -> None:
    tasks = TaskRegistry(root / ".tasks")
    ctx, rules = context(root, tasks), two_hundred_rules()
    data = BASH_TOOL.input_model(command=LINE)
    first = await decide(BASH_TOOL, data, ctx, rules)
    assert first.behavior == "allow", first
    warm: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        await decide(BASH_TOOL, data, ctx, rules)
        warm.append(time.perf_counter() - started)
    cold: list[float] = []
    for i in range(min(runs, 50)):
        fresh = BASH_TOOL.input_model(command=f"{LINE} && echo {i}")
        started = time.perf_counter()
        await decide(BASH_TOOL, fresh, ctx, rules)
        cold.append(time.perf_counter() - started)
    _parse_cached.cache_clear()
    print(f"rule evaluation, 20 subcommands x 200 rules (target < 1 ms): {summary(warm)}")
    print(f"  first sight of a new line, bashlex parse included: {summary(cold)}")


async def sandbox_bench(root: Path, runs: int) -> None:
    async def once(wrap: Wrap | None) -> float:
        started = time.perf_counter()
        result = await run_shell("true", cwd=root, timeout_s=10, max_output_chars=1000, wrap=wrap)
        assert result.exit_code == 0, result.output
        return time.perf_counter() - started

    direct = [await once(None) for _ in range(runs)]
    print(f"`true` directly:          {summary(direct)}")
    status = probe()
    if not status.available:
        print(f"`true` under bubblewrap:  unavailable ({status.problem})")
        return
    sandbox = BwrapSandbox(root)
    wrapped: list[float] = []
    for _ in range(runs):
        with sandbox.session(root) as wrap:
            wrapped.append(await once(wrap))
    sandbox.close()
    print(f"`true` under bubblewrap:  {summary(wrapped)}")
    overhead = sorted(wrapped)[len(wrapped) // 2] - sorted(direct)[len(direct) // 2]
    print(f"  sandbox start overhead (median): {overhead * 1000:.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sandbox-runs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        await rules_bench(root, args.runs)
        await sandbox_bench(root, args.sandbox_runs)


if __name__ == "__main__":
    asyncio.run(main())
