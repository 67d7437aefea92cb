"""``tether -p`` from the outside, through the warm daemon and without it.

The 4-turn script (three Reads in one message, an Edit, a Bash echo, final text) against
the fake Messages API, whole process wall time, run three ways: with the warm daemon
already running, cold (no daemon running: the call starts it), and ``--no-daemon`` (in
this process, as before the daemon); and ``tether run "hi"`` (one text response) warm.
Medians, and ratios against the ``--no-daemon`` run of the same script.
Targets: warm 4-turn run <= 0.25 s, warm ``tether run "hi"`` <= 0.15 s, cold no slower
than ``--no-daemon``.

    python bench/cli.py [--runs 10]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
