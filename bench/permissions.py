"""Permission costs, printed:

- parsing: tree-sitter-bash parse and walk of each line of the shell corpus
  (``tests/security/shell_corpus.jsonl``), median over the lines (target < 0.1 ms);
- import: the permission layer (``tether.permissions`` and the sandbox, parser included)
  in a fresh interpreter, on top of the tool types it builds on (target < 50 ms), and
  the parser alone from a bare interpreter;
- rule evaluation for a 20-subcommand shell line against 200 rules (target < 1 ms);
- the start overhead of the bubblewrap sandbox for `true` (layout included).

Rule evaluation is the full ``decide()`` for a Bash call (deny, ask, control plane, paths,
destructive git, allow per subcommand) on a line the daemon has already parsed — every
call is parsed once and looked at several times (flags, rules, display). The first sight
of a new line, parse included, is reported separately.

    python bench/permissions.py [--runs 200] [--sandbox-runs 50] [--import-runs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import summary

from tether.editor.disk import DiskEditor
from tether.permissions.policy import RuleSet, decide
from tether.permissions.shell.analysis import parse_script as parse_cached
from tether.permissions.shell.syntax import parse_script
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
    parse_cached.cache_clear()
    print(f"rule evaluation, 20 subcommands x 200 rules (target < 1 ms): {summary(warm)}")
    print(f"  first sight of a new line, parse included: {summary(cold)}")


CORPUS = Path(__file__).parent.parent / "tests" / "security" / "shell_corpus.jsonl"


def parse_bench(runs: int) -> None:
    lines = [json.loads(line)["command"] for line in CORPUS.read_text().splitlines() if line]
    per_line: list[float] = []
    for command in lines:
        samples: list[float] = []
        for _ in range(max(5, runs // 20)):
            started = time.perf_counter()
            try:
                parse_script(command)
            except Exception:  # unanalysable lines cost the same to find out
                pass
            samples.append(time.perf_counter() - started)
        per_line.append(statistics.median(samples))
    print(f"parse per command over the corpus, {len(lines)} lines (target median < 0.1 ms):")
    print(f"  {summary(per_line)}")


def _import_seconds(preload: str, module: str) -> tuple[float, float]:
    """Wall and CPU seconds of one import in a fresh interpreter. CPU time is what the
    import costs; on a busy machine wall time adds the wait for a core."""
    code = (
        f"{preload}\nimport time\nw, c = time.perf_counter(), time.process_time()\n"
        f"import {module}\n"
        "print(time.perf_counter() - w, time.process_time() - c)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall, cpu = done.stdout.split()
    return float(wall), float(cpu)


def import_bench(runs: int) -> None:
    base = (
        "import tether.tools.base, tether.tools.context, tether.protocol.content, "
        "tether.settings.model, tether.editor.port, tether.errors"
    )
    layer = [_import_seconds(base, "tether.permissions.policy") for _ in range(runs)]
    parser = [_import_seconds("", "tether.permissions.shell") for _ in range(runs)]
    print("import of the permission layer, tool types loaded (target < 50 ms):")
    print(f"  cpu  {summary([c for _, c in layer])}")
    print(f"  wall {summary([w for w, _ in layer])}")
    print("  the shell parser alone, bare interpreter:")
    print(f"  cpu  {summary([c for _, c in parser])}")
    print(f"  wall {summary([w for w, _ in parser])}")


async def sandbox_bench(root: Path, runs: int) -> None:
    async def once(wrap: Wrap | None, pass_fds: tuple[int, ...] = ()) -> float:
        started = time.perf_counter()
        result = await run_shell(
            "true", cwd=root, timeout_s=10, max_output_chars=1000, wrap=wrap, pass_fds=pass_fds
        )
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
        with sandbox.session(root) as confined:
            wrapped.append(await once(confined, confined.pass_fds))
    sandbox.close()
    print(f"`true` under bubblewrap:  {summary(wrapped)}")
    overhead = sorted(wrapped)[len(wrapped) // 2] - sorted(direct)[len(direct) // 2]
    print(f"  sandbox start overhead (median): {overhead * 1000:.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sandbox-runs", type=int, default=50)
    parser.add_argument("--import-runs", type=int, default=7)
    args = parser.parse_args()
    parse_bench(args.runs)
    import_bench(args.import_runs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        await rules_bench(root, args.runs)
        await sandbox_bench(root, args.sandbox_runs)


if __name__ == "__main__":
    asyncio.run(main())
