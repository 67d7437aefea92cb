"""``tether -p`` from the outside, through the warm daemon and without it.

The 4-turn script (three Reads in one message, an Edit, a Bash echo, final text) against
the fake Messages API, whole process wall time, run three ways: with the warm daemon
already running, cold (no daemon running: the call starts it), and ``--no-daemon`` (in
this process, as before the daemon); and ``tether run "hi"`` (one text response) warm.
Medians, and ratios against the ``--no-daemon`` run of the same script.
Targets: warm 4-turn run <= 0.25 s, warm ``tether run "hi"`` <= 0.15 s, cold no slower
than ``--no-daemon``.

Then the first calls of a daemon against its later ones (``first_calls``), each time with a
daemon just started by ``tether daemon start``: the first ``tether run "hi"`` and the first
``tether -p --resume`` of a session built through the daemon just before (300 Bash
round-trips, ``--build-turns``), against the median of the next four of each. Measured to
the first request at the fake API, and as the daemon's CPU time for the call (the wall
time of a loaded machine varies more than the work does). Target: first <= 1.5x of later.

    python bench/cli.py [--runs 10] [--first-runs 3] [--build-turns 300]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import four_turn_script, summary

from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"
TETHER = Path(sys.executable).with_name("tether")


def hi() -> list[Any]:
    return [[{"type": "text", "text": "Hello."}]]


class Bench:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.env = {
            **os.environ,
            "HOME": str(tmp / "home"),
            "TETHER_DATA_DIR": str(tmp / "data"),
            "XDG_CONFIG_HOME": str(tmp / "config"),
            "TETHER_RUNTIME_DIR": str(tmp / "run"),
            "ANTHROPIC_API_KEY": "bench-key",
        }
        self.env.pop("TETHER_NO_DAEMON", None)
        self.env.pop("ANTHROPIC_AUTH_TOKEN", None)

    def stop_daemon(self) -> None:
        """Stop the daemon and wait until its process is gone (a daemon still exiting
        would take CPU from the next, cold, run)."""
        status = subprocess.run(
            [str(TETHER), "daemon", "status", "--json"], env=self.env, capture_output=True
        )
        subprocess.run(
            [str(TETHER), "daemon", "stop"], env=self.env, capture_output=True, check=True
        )
        if status.returncode == 0:
            pid = int(json.loads(status.stdout)["pid"])
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.02)

    def wait_for_daemon(self) -> None:
        subprocess.run(
            [str(TETHER), "daemon", "start"], env=self.env, capture_output=True, check=True
        )

    def run(self, script: list[Any], *argv: str, no_daemon: bool = False) -> float:
        root = self.tmp / "ws"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(FIXTURE, root)
        env = dict(self.env)
        if no_daemon:
            env["TETHER_NO_DAEMON"] = "1"
        with FakeAnthropicServer(script) as api:
            env["ANTHROPIC_BASE_URL"] = api.base_url
            started = time.monotonic()
            done = subprocess.run(
                [str(TETHER), *argv], cwd=root, env=env, capture_output=True, text=True
            )
            took = time.monotonic() - started
            if done.returncode != 0:
                raise SystemExit(f"tether {' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
            api.assert_complete()
        return took


SCRIPT_ARGV = ("-p", "do the four steps", "--permission-mode", "bypassPermissions")
SESSION_ID = "0b5e55ed-0000-4000-8000-000000000300"


def call_params_cost(runs: int = 500) -> str:
    """What the thin client's whole environment adds to a call: the size of its
    ``tether/print`` params, and the time to read the umask and copy and encode the
    environment (the rest of the params, the build id above all, is as before)."""
    from tether.cli.remote import call_params
    from tether.core.environ import current_umask

    env = dict(os.environ)
    size = len(json.dumps(call_params(SCRIPT_ARGV, env), separators=(",", ":")))
    took: list[float] = []
    whole: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        json.dumps({"env": dict(env), "umask": current_umask()}, separators=(",", ":"))
        took.append(time.perf_counter() - started)
        started = time.perf_counter()
        json.dumps(call_params(SCRIPT_ARGV, env), separators=(",", ":"))
        whole.append(time.perf_counter() - started)
    env_us, whole_us = statistics.median(took) * 1e6, statistics.median(whole) * 1e6
    return (
        f"{len(env)} variables, {size} bytes of params; the environment and umask take "
        f"{env_us:.0f} us of the {whole_us:.0f} us the params take to build and encode"
    )


class FirstCalls:
    """A daemon's first calls against its later ones: to the first request at the fake API,
    and the daemon's CPU time for each call."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.root = bench.tmp / "first"
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(FIXTURE, self.root)
        self.pid = 0

    def start(self) -> None:
        self.bench.stop_daemon()
        self.bench.wait_for_daemon()
        status = subprocess.run(
            [str(TETHER), "daemon", "status", "--json"],
            env=self.bench.env,
            capture_output=True,
            check=True,
        )
        self.pid = int(json.loads(status.stdout)["pid"])

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def call(self, script: list[Any], *argv: str) -> tuple[float, float]:
        env = dict(self.bench.env)
        with FakeAnthropicServer(script) as api:
            env["ANTHROPIC_BASE_URL"] = api.base_url
            cpu, started = self.cpu(), time.monotonic()
            done = subprocess.run(
                [str(TETHER), *argv], cwd=self.root, env=env, capture_output=True, text=True
            )
            if done.returncode != 0:
                raise SystemExit(f"tether {' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
            api.assert_complete()
            return api.request_times[0] - started, self.cpu() - cpu

    def run_hi(self) -> tuple[float, float]:
        return self.call(hi(), "run", "hi")

    def build(self, turns: int) -> None:
        shutil.rmtree(Path(self.bench.env["TETHER_DATA_DIR"]), ignore_errors=True)
        echo = [
            [{"type": "tool_use", "name": "Bash", "input": {"command": f"echo {n}"}}]
            for n in range(turns)
        ]
        argv = ["-p", "build", "--session-id", SESSION_ID, "--allowedTools", "Bash(echo:*)"]
        self.call([*echo, *hi()], *argv)

    def resume(self) -> tuple[float, float]:
        return self.call(hi(), "-p", "--resume", SESSION_ID, "one more")


def first_calls(bench: Bench, runs: int, turns: int) -> None:
    calls = FirstCalls(bench)
    results: dict[str, tuple[list[float], list[float], list[float], list[float]]] = {}
    for label in ("run", "resume"):
        results[label] = ([], [], [], [])
    for _ in range(runs):
        calls.start()
        for label, measure in (("run", calls.run_hi), ("resume", calls.resume)):
            if label == "resume":
                calls.start()
                calls.build(turns)
            first_wall, first_cpu, later_wall, later_cpu = results[label]
            wall, cpu = measure()
            first_wall.append(wall)
            first_cpu.append(cpu)
            later = [measure() for _ in range(4)]
            later_wall.append(statistics.median(w for w, _ in later))
            later_cpu.append(statistics.median(c for _, c in later))
    bench.stop_daemon()
    print(f"a daemon's first calls, each time right after `tether daemon start`, {runs} runs:")
    names = {
        "run": 'first `tether run "hi"`',
        "resume": f"first --resume after a {turns}-turn build through the daemon",
    }
    for label, (first_wall, first_cpu, later_wall, later_cpu) in results.items():
        wall = statistics.median(first_wall) / statistics.median(later_wall)
        cpu = statistics.median(first_cpu) / max(statistics.median(later_cpu), 1e-3)
        print(f"  {names[label]}: to the first request {summary(first_wall)}")
        print(f"    later ones (median of the next four): {summary(later_wall)}")
        print(
            f"    first / later: {wall:.2f}x to the first request, {cpu:.2f}x daemon CPU "
            f"({statistics.median(first_cpu) * 1000:.0f} ms / "
            f"{statistics.median(later_cpu) * 1000:.0f} ms)  [target <= 1.5x]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-runs", type=int, default=3)
    parser.add_argument("--build-turns", type=int, default=300)
    parser.add_argument("--only-first", action="store_true", help="only the first calls")
    args = parser.parse_args()
    if args.only_first:
        print(f"the thin client's tether/print (this environment): {call_params_cost()}")
        with tempfile.TemporaryDirectory() as tmp:
            first_calls(Bench(Path(tmp)), args.first_runs, args.build_turns)
        return
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp))
        bench.run(four_turn_script(), *SCRIPT_ARGV, no_daemon=True)  # warm the file cache
        in_process: list[float] = []
        cold: list[float] = []
        warm: list[float] = []
        run_hi: list[float] = []
        # Interleaved, so that the machine's load weighs on every variant alike.
        for _ in range(args.runs):
            bench.stop_daemon()
            in_process.append(bench.run(four_turn_script(), *SCRIPT_ARGV, no_daemon=True))
            cold.append(bench.run(four_turn_script(), *SCRIPT_ARGV))
            bench.wait_for_daemon()  # the call started it as it left
            bench.run(hi(), "run", "hi")  # the daemon's first call warms it
            warm.append(bench.run(four_turn_script(), *SCRIPT_ARGV))
            run_hi.append(bench.run(hi(), "run", "hi"))
        bench.stop_daemon()
        first_calls(bench, args.first_runs, args.build_turns)
    base = statistics.median(in_process)
    print(f"4-turn script (3 Reads, Edit, Bash echo, text), whole tether -p run, {args.runs} runs")
    for label, samples in (
        ("--no-daemon (in-process)", in_process),
        ("cold (no daemon; the call starts one as it leaves)", cold),
        ("daemon warm", warm),
    ):
        ratio = statistics.median(samples) / base
        print(f"  {label:55} {summary(samples)}  = {ratio:.2f}x of --no-daemon")
    print(f'tether run "hi", daemon warm:        {summary(run_hi)}')
    print('targets: warm 4-turn <= 250 ms, warm run "hi" <= 150 ms, cold <= 1.00x of --no-daemon')
    print(f"the thin client's tether/print (this environment): {call_params_cost()}")


if __name__ == "__main__":
    main()
