"""The warm daemon over a long day, accelerated: is its memory flat?

20 sessions (five in each of four workspaces) prompt through one daemon, round after round,
with no pause: each prompt is a ``tether -p --resume`` call of the thin client, with the
caller's own environment (its own API endpoint: one strict fake Messages API per session,
in this process), and each turn runs a Bash command (sandboxed) before its text answer, so a
round is 20 calls, 40 model requests and 20 sandboxes. Like a day's work, a session ends
after ten prompts and a new one takes its place (``--session-prompts``): what one call
costs stays the same, so memory that keeps growing is memory the daemon keeps. After every round the daemon's
resident memory (``VmRSS``), threads and open descriptors are sampled.

With ``--mcp``, every call also connects its caller's own stdio MCP server of 150 tools
(``tests/support/mcp_server.py --generated-only``, through ``--mcp-config``): what each
connection makes of its tools must go when the call ends.

Printed: the curve, then the change from the end of the warm-up (the first quarter of the
rounds) to the end and the spread of the samples after it. Target: both within 10 %. The
default 40 rounds are 800 calls, about what 20 sessions of a working day's two hours ask.

    python bench/soak.py [--rounds 40] [--sessions 20] [--workers 4] [--mcp]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"
MCP_SERVER = Path(__file__).parent.parent / "tests" / "support" / "mcp_server.py"
TETHER = str(Path(sys.executable).with_name("tether"))
MODEL = "claude-sonnet-4-6"


@dataclass
class Soaked:
    """One slot: a session of work after another (a new one every ``--session-prompts``)."""

    session_id: str
    root: Path
    api: FakeAnthropicServer
    tag: str
    prompts: int = 0


def script(rounds: int) -> list[Any]:
    turns: list[Any] = []
    for n in range(rounds):
        bash = {"type": "tool_use", "name": "Bash", "input": {"command": f"echo round {n}"}}
        turns += [[bash], [{"type": "text", "text": f"Round {n} done."}]]
    return turns


def sample(pid: int) -> tuple[float, int, int]:
    """The daemon's resident memory (MB), threads and open descriptors."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        raise SystemExit(
            f"the daemon (pid {pid}) is gone: it failed, or an edit of the source made the "
            "next call replace it with a daemon of the new build (see its log)"
        ) from None
    fields = dict(line.split(":", 1) for line in status.splitlines())
    rss_kb = int(fields["VmRSS"].split()[0])
    return rss_kb / 1024, int(fields["Threads"]), len(os.listdir(f"/proc/{pid}/fd"))


class Soak:
    def __init__(self, tmp: Path, sessions: int, rounds: int, *, mcp: bool = False) -> None:
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp / "home"),
            "TETHER_DATA_DIR": str(tmp / "data"),
            "XDG_CONFIG_HOME": str(tmp / "config"),
            "TETHER_RUNTIME_DIR": str(tmp / "run"),
            "ANTHROPIC_API_KEY": "soak-key",
            "TETHER_DAEMON_IDLE_S": "600",
        }
        self.mcp: list[str] = []
        if mcp:
            server = {
                "command": sys.executable,
                "args": [str(MCP_SERVER), "--generated-only"],
                "env": {"CALLER": "${SOAK_TAG}"},
            }
            config = tmp / "mcp.json"
            config.write_text(json.dumps({"mcpServers": {"many": server}}))
            self.mcp = ["--mcp-config", str(config), "--strict-mcp-config"]
        self.sessions: list[Soaked] = []
        for n in range(sessions):
            root = tmp / f"ws{n % 4}"
            if not root.exists():
                shutil.copytree(FIXTURE, root)
            api = FakeAnthropicServer(script(rounds))
            api.start()
            self.sessions.append(Soaked(str(uuid.uuid4()), root, api, f"caller-{n}"))

    def tether(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([TETHER, *argv], env=self.env, capture_output=True, text=True)

    def daemon_pid(self) -> int:
        done = self.tether("daemon", "status", "--json")
        return int(json.loads(done.stdout)["pid"])

    def call(self, session: Soaked, per_session: int) -> None:
        env = {**self.env, "ANTHROPIC_BASE_URL": session.api.base_url, "SOAK_TAG": session.tag}
        if session.prompts % per_session == 0:
            session.session_id = str(uuid.uuid4())
            which = ["--session-id", session.session_id]
        else:
            which = ["--resume", session.session_id]
        session.prompts += 1
        argv = [TETHER, "-p", "go on", *which, "--model", MODEL, "--allowedTools", "Bash(echo:*)"]
        argv += self.mcp
        done = subprocess.run(argv, cwd=session.root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"a call failed ({done.returncode}):\n{done.stdout}{done.stderr}")

    def round(self, per_session: int, workers: int) -> None:
        work: queue.Queue[Soaked] = queue.Queue()
        for session in self.sessions:
            work.put(session)
        failures: list[BaseException] = []

        def worker() -> None:
            while True:
                try:
                    session = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    self.call(session, per_session)
                except BaseException as e:
                    failures.append(e)
                    return

        threads = [threading.Thread(target=worker) for _ in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]

    def close(self) -> None:
        for session in self.sessions:
            session.api.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--session-prompts", type=int, default=10, help="prompts of one session of work"
    )
    parser.add_argument(
        "--mcp", action="store_true", help="each call with its own 150-tool stdio MCP server"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as raw:
        soak = Soak(Path(raw), args.sessions, args.rounds, mcp=args.mcp)
        try:
            if soak.tether("daemon", "start").returncode != 0:
                raise SystemExit("the daemon did not start")
            pid = soak.daemon_pid()
            started = time.monotonic()
            curve: list[tuple[float, int, int]] = []
            mcp = ", each call with a 150-tool MCP server" if args.mcp else ""
            print(f"soak: {args.sessions} sessions x {args.rounds} rounds{mcp}, daemon pid {pid}")
            print("  round  calls  elapsed     RSS   threads  fds")
            for n in range(args.rounds):
                soak.round(args.session_prompts, args.workers)
                rss, threads, fds = sample(pid)
                curve.append((rss, threads, fds))
                calls = (n + 1) * args.sessions
                elapsed = time.monotonic() - started
                print(
                    f"  {n + 1:5d}  {calls:5d}  {elapsed:6.1f} s  {rss:6.1f} MB"
                    f"  {threads:7d}  {fds:3d}"
                )
            for session in soak.sessions:
                session.api.assert_complete()
            if soak.daemon_pid() != pid:
                raise SystemExit("the daemon was replaced during the soak")
        finally:
            soak.tether("daemon", "stop")
            soak.close()
    warm = max(1, args.rounds // 4)
    after = [rss for rss, _, _ in curve[warm - 1 :]]
    growth = after[-1] / after[0] - 1
    spread = max(after) / min(after) - 1
    print(
        f"after warm-up (round {warm}, {after[0]:.1f} MB) to the end ({after[-1]:.1f} MB): "
        f"{growth * 100:+.1f} %; spread of the samples after warm-up: {spread * 100:.1f} %  "
        "[target: both within 10 %]"
    )


if __name__ == "__main__":
    main()
