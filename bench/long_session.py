"""Harness cost over a long session: 1,000 round-trips of a Bash ``echo`` in one prompt,
through the path ``tether run --no-daemon`` takes (``InProcessDriver``: workspace, session,
transcript, permissions, sandboxed Bash) against the strict fake Messages API and the real
Anthropic SDK.

Printed, each a phase of its own (one function per phase, so a warm-daemon variant can be
added next to the in-process one):

- harness time per round-trip, turns 1-100 and 901-1,000: from the end of a model response
  (or of the Bash tool, when it ends later: tools start while the response streams) to the
  next request at the fake API (targets <= 10 ms and <= 15 ms); the whole gap, the tool
  included, is printed too
- the whole build (target <= 15 s), and how much of it the fake API spent answering (the fake
  runs in a process of its own, as the real API does)
- ``--resume`` of that session to its first model request: cold (a new ``tether -p``
  process with no daemon, start-up included; target <= 1.0 s), warm (``tether -p --resume``
  through a warm daemon, the thin client's start-up included; target <= 0.2 s), and in this
  process, already warm (the session opened again through ``InProcessDriver``)

Then the same build through the command line, side by side (``--cli``, interleaved, each
``--cli-runs`` times): ``tether -p`` without a daemon, ``tether -p`` through a warm daemon,
``tether -p`` through the warm daemon with Bash unsandboxed (``sandbox.enabled: false``,
as Claude Code runs commands by default: the sandbox's share of a round-trip apart from the
harness's), and Claude Code's CLI (the one the ``claude-agent-sdk`` wheel bundles, the
newest this environment has) as it runs by default (no sandbox) and with its own sandbox on
(``sandbox.enabled``: bubblewrap and socat, measured when both are installed), each against
its own fake API process with the same script. Printed: the whole wall time and the
harness's share (wall minus the fake's measured service time, which is the API's, not the
harness's), and Tether's speed-up over Claude Code on the latter, against Claude Code's
default and, for sandboxed Tether, against sandboxed Claude Code (target >= 3x at 300 and
1,000 turns).

    python bench/long_session.py [--turns 1000] [--cli 300,1000] [--cli-runs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms, summary

from tether.cli.driver import OpenRequest
from tether.cli.inprocess import InProcessDriver
from tether.protocol.content import TextContent
from tether.protocol.updates import SessionUpdate, ToolCallUpdate
from tether.settings.load import SettingSources
from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"
MODEL = "anthropic:claude-sonnet-4-6"
SESSION_ID = "0b5e55ed-0000-4000-8000-000000001000"
TETHER = [sys.executable, "-m", "tether"]


@dataclass
class Bench:
    """The workspace and environment every phase shares."""

    tmp: Path
    turns: int
    root: Path = field(init=False)
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.tmp / "ws"
        shutil.copytree(FIXTURE, self.root)
        self.env = {
            "HOME": str(self.tmp / "home"),
            "TETHER_DATA_DIR": str(self.tmp / "data"),
            "XDG_CONFIG_HOME": str(self.tmp / "config"),
            "ANTHROPIC_API_KEY": "bench-key",
            "TETHER_NO_DAEMON": "1",
        }


@dataclass
class BuildNumbers:
    gaps: list[float]
    """Response end -> next request, per round-trip."""
    harness: list[float]
    """From the later of the response's end and the tool's end to the next request (the
    tool may start while the response still streams)."""
    wall_s: float
    fake_s: float
    """Time the fake API spent between receiving a request and finishing its answer."""


def echo_script(turns: int) -> list[Any]:
    bash = [
        [{"type": "tool_use", "name": "Bash", "input": {"command": f"echo {i}"}}]
        for i in range(turns)
    ]
    return [*bash, [{"type": "text", "text": "Done."}]]


@dataclass
class FakeApiProcess:
    """The strict fake Messages API in a process of its own, as the real API is: in this
    process its request checks would take turns with the harness for the interpreter lock,
    and a long body's send would wait on the fake's reading thread."""

    tmp: Path
    script: list[Any]
    base_url: str = ""
    process: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeApiProcess:
        script = self.tmp / "script.json"
        script.write_text(json.dumps(self.script), encoding="utf-8")
        argv = [sys.executable, "-m", "tether.testing.fake_anthropic", "--script", str(script)]
        argv += ["--timings", str(self.tmp / "timings.json"), "--summary-reply", SUMMARY]
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        ready = self.process.stdout.readline().split()
        if ready[:1] != ["READY"]:
            raise SystemExit(f"the fake API did not start: {ready}")
        self.base_url = ready[1]
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        if self.process.wait(timeout=30) != 0 and exc[0] is None:
            raise SystemExit("the fake API saw problems (above)")

    def timings(self) -> tuple[list[float], list[float]]:
        raw = json.loads((self.tmp / "timings.json").read_text(encoding="utf-8"))
        return raw["requests"], raw["answered"]


SUMMARY = "The user asked for many echoes; they all ran."


async def build_in_process(bench: Bench) -> BuildNumbers:
    """One prompt, ``turns`` Bash round-trips, a final text; driven like ``tether run``."""
    os.environ.update(bench.env)
    tool_done: list[float] = []

    def listen(_turn: str, update: SessionUpdate) -> None:
        if isinstance(update, ToolCallUpdate) and update.status in ("completed", "failed"):
            tool_done.append(time.monotonic())

    with FakeApiProcess(bench.tmp, echo_script(bench.turns)) as api:
        os.environ["ANTHROPIC_BASE_URL"] = api.base_url
        driver = InProcessDriver(setting_sources=SettingSources(user=False))
        started = time.monotonic()
        await driver.open(
            OpenRequest(
                cwd=bench.root, session_id=SESSION_ID, model=MODEL, mode="bypassPermissions"
            )
        )
        unsubscribe = driver.subscribe(listen)
        outcome = await driver.prompt([TextContent(text="Run echo many times.")])
        unsubscribe()
        await driver.close()
        wall = time.monotonic() - started
    assert outcome.reason == "completed", outcome
    requests, answered = api.timings()
    gaps = [requests[i + 1] - answered[i] for i in range(len(requests) - 1)]
    fake = sum(end - start for start, end in zip(requests, answered, strict=True))
    assert len(tool_done) == bench.turns, (len(tool_done), bench.turns)
    harness = [
        next_request - max(response_end, done)
        for next_request, response_end, done in zip(requests[1:], answered, tool_done, strict=False)
    ]
    return BuildNumbers(gaps, harness, wall, fake)


def resume_cold(bench: Bench) -> float:
    """A new ``tether -p --resume`` process: spawn to the first request at the fake API."""
    with FakeAnthropicServer([[{"type": "text", "text": "Resumed."}]]) as api:
        env = {**os.environ, **bench.env, "ANTHROPIC_BASE_URL": api.base_url}
        argv = [*TETHER, "-p", "--resume", SESSION_ID, "--output-format", "json", "one more"]
        started = time.monotonic()
        done = subprocess.run(argv, cwd=bench.root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"tether -p --resume failed ({done.returncode}):\n{done.stderr}")
        api.assert_complete()
        return api.request_times[0] - started


def resume_warm_daemon(bench: Bench, runs: int = 3) -> list[float]:
    """``tether -p --resume`` through a daemon that has already served a call: spawn of the
    thin client to the first request at the fake API."""
    env = {**os.environ, **bench.env, "TETHER_RUNTIME_DIR": str(bench.tmp / "run")}
    env.pop("TETHER_NO_DAEMON")
    tether = [str(Path(sys.executable).with_name("tether"))]
    subprocess.run([*tether, "daemon", "start"], env=env, capture_output=True, check=True)
    took: list[float] = []
    try:
        script = [[{"type": "text", "text": "Warm."}]] * (runs + 1)
        with FakeAnthropicServer(script) as api:
            env["ANTHROPIC_BASE_URL"] = api.base_url
            for n in range(runs + 1):
                argv = [*tether, "-p", "--resume", SESSION_ID, f"warm {n}"]
                started = time.monotonic()
                done = subprocess.run(argv, cwd=bench.root, env=env, capture_output=True)
                if done.returncode != 0:
                    raise SystemExit(f"tether -p --resume (daemon) failed:\n{done.stderr!r}")
                if n:  # the first call warms the daemon (imports the SDK)
                    took.append(api.request_times[n] - started)
            api.assert_complete()
    finally:
        subprocess.run([*tether, "daemon", "stop"], env=env, capture_output=True)
    return took


async def resume_in_process(bench: Bench) -> float:
    """The session opened again in this (warm) process: open to the first model request."""
    with FakeAnthropicServer([[{"type": "text", "text": "Resumed again."}]]) as api:
        os.environ["ANTHROPIC_BASE_URL"] = api.base_url
        driver = InProcessDriver(setting_sources=SettingSources(user=False))
        started = time.monotonic()
        await driver.open(OpenRequest(cwd=bench.root, resume=SESSION_ID, model=MODEL))
        await driver.prompt([TextContent(text="and one more")])
        await driver.close()
        api.assert_complete()
        return api.request_times[0] - started


def claude_code() -> Path | None:
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return path if path.is_file() else None


@dataclass
class CliBuild:
    wall_s: float
    fake_s: float

    @property
    def harness_s(self) -> float:
        return self.wall_s - self.fake_s


def build_cli(
    bench: Bench, turns: int, program: list[str], env: dict[str, str], *extra: str
) -> CliBuild:
    """``program -p`` building a ``turns``-Bash session in a fresh copy of the workspace,
    against a fake API process of its own: the whole process's wall time, and the fake's."""
    tmp = Path(tempfile.mkdtemp(dir=bench.tmp))
    root = tmp / "ws"
    shutil.copytree(FIXTURE, root)
    with FakeApiProcess(tmp, echo_script(turns)) as api:
        argv = [*program, "-p", "Run echo many times.", "--output-format", "json"]
        argv += ["--allowedTools", "Bash(echo:*)", *extra]
        run_env = {**env, "ANTHROPIC_BASE_URL": api.base_url}
        started = time.monotonic()
        done = subprocess.run(argv, cwd=root, env=run_env, capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            raise SystemExit(f"{program[0]} -p failed ({done.returncode}):\n{done.stderr[-2000:]}")
    requests, answered = api.timings()
    if len(requests) != turns + 1:
        raise SystemExit(f"{program[0]}: {len(requests)} requests for {turns} turns")
    fake = sum(end - start for start, end in zip(requests, answered, strict=True))
    shutil.rmtree(tmp, ignore_errors=True)
    return CliBuild(wall, fake)


UNSANDBOXED = json.dumps({"sandbox": {"enabled": False}})
"""Bash without bubblewrap and the gate, as Claude Code runs it by default: what the sandbox
costs a round-trip, apart from the harness."""

CLAUDE_SANDBOXED = json.dumps({"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True}})
"""Claude Code with its own sandbox on (bubblewrap, and socat for its network proxy on
Linux), as Tether runs commands by default: the like-for-like comparison of a sandboxed
round-trip."""


def claude_can_sandbox() -> bool:
    return shutil.which("bwrap") is not None and shutil.which("socat") is not None


def cli_builds(bench: Bench, turns_list: list[int], runs: int) -> None:
    claude = claude_code()
    base = {
        **os.environ,
        **bench.env,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "TETHER_RUNTIME_DIR": str(bench.tmp / "cli-run"),
    }
    base.pop("ANTHROPIC_AUTH_TOKEN", None)
    warm = {k: v for k, v in base.items() if k != "TETHER_NO_DAEMON"}
    tether = [str(Path(sys.executable).with_name("tether"))]
    subprocess.run([*tether, "daemon", "start"], env=warm, capture_output=True, check=True)
    try:
        build_cli(bench, 3, tether, warm)  # the daemon's first call warms it
        for turns in turns_list:
            results: dict[str, list[CliBuild]] = {
                "no daemon": [],
                "warm daemon": [],
                "warm, no sandbox": [],
                "claude": [],
                "claude, sandboxed": [],
            }
            for _ in range(runs):  # interleaved: the machine's load weighs on each alike
                results["no daemon"].append(build_cli(bench, turns, tether, base))
                results["warm daemon"].append(build_cli(bench, turns, tether, warm))
                results["warm, no sandbox"].append(
                    build_cli(bench, turns, tether, warm, "--settings", UNSANDBOXED)
                )
                if claude is not None:
                    results["claude"].append(build_cli(bench, turns, [str(claude)], base))
                    if claude_can_sandbox():
                        sandboxed = build_cli(
                            bench, turns, [str(claude)], base, "--settings", CLAUDE_SANDBOXED
                        )
                        results["claude, sandboxed"].append(sandboxed)
            print(f"{turns}-turn build through the CLI, {runs} runs each (medians):")
            medians = {
                label: statistics.median(b.harness_s for b in builds)
                for label, builds in results.items()
                if builds
            }
            theirs = medians.get("claude", 0.0)
            theirs_sandboxed = medians.get("claude, sandboxed", 0.0)
            for label, builds in results.items():
                if not builds:
                    why = (
                        "no Claude Code binary in claude-agent-sdk"
                        if claude is None
                        else "Claude Code's sandbox needs bwrap and socat"
                    )
                    print(f"  {label}: not measured ({why})")
                    continue
                wall = statistics.median(b.wall_s for b in builds)
                harness = medians[label]
                ratio = ""
                if not label.startswith("claude") and theirs:
                    ratio = f"; Claude Code / this: {theirs / harness:.2f}x"
                    if theirs_sandboxed and label != "warm, no sandbox":
                        ratio += f", sandboxed / this: {theirs_sandboxed / harness:.2f}x"
                print(
                    f"  {label:17} wall {wall:6.2f} s, harness (wall minus the fake's "
                    f"{wall - harness:.2f} s) {harness:6.2f} s{ratio}"
                )
            if theirs:
                print(
                    "  target: Claude Code / tether >= 3x (like for like: sandboxed against "
                    "sandboxed, unsandboxed against unsandboxed; both defaults are printed)"
                )
    finally:
        subprocess.run([*tether, "daemon", "stop"], env=warm, capture_output=True)


def window(samples: list[float], first: int, last: int) -> list[float]:
    """Round-trips ``first``..``last`` (1-based, inclusive)."""
    return samples[first - 1 : last]


async def main(turns: int, cli: list[int], cli_runs: int, cli_only: bool) -> None:
    with tempfile.TemporaryDirectory() as raw:
        bench = Bench(Path(raw), turns)
        if cli:
            cli_builds(bench, cli, cli_runs)
        if cli_only:
            return
        built = await build_in_process(bench)
        early = window(built.harness, 1, min(100, turns))
        late = window(built.harness, max(1, turns - 99), turns)
        print(f"long session: {turns} Bash echo round-trips in one prompt (in-process)")
        print(f"  harness per round-trip, turns 1-100: {summary(early)}  [target <= 10 ms]")
        print(
            f"  harness per round-trip, turns {max(1, turns - 99)}-{turns}: {summary(late)}"
            "  [target <= 15 ms]"
        )
        late_over_early = statistics.median(late) / statistics.median(early)
        print(f"    late / early: {late_over_early:.2f}x")
        print(f"  gap incl. Bash, turns 1-100: {summary(window(built.gaps, 1, 100))}")
        print(f"  gap incl. Bash, last 100: {summary(window(built.gaps, turns - 99, turns))}")
        print(
            f"  whole build: {built.wall_s:.2f} s  [target <= 15 s]; of it the fake API "
            f"answering: {built.fake_s:.2f} s"
        )
        cold = resume_cold(bench)
        print(f"  --resume to the first model request, cold process: {ms(cold)}  [target <= 1.0 s]")
        daemon = resume_warm_daemon(bench)
        print(
            f"  --resume to the first model request, warm daemon: {summary(daemon)}"
            "  [target <= 0.2 s]"
        )
        warm = [await resume_in_process(bench) for _ in range(3)]
        print(f"  resume to the first model request, in this (warm) process: {summary(warm)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--cli", default="300,1000", help="turns of the CLI builds ('': none)")
    parser.add_argument("--cli-runs", type=int, default=2)
    parser.add_argument("--cli-only", action="store_true", help="only the CLI builds")
    args = parser.parse_args()
    cli = [int(t) for t in args.cli.split(",") if t]
    asyncio.run(main(args.turns, cli, args.cli_runs, args.cli_only))
