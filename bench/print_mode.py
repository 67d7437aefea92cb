"""Print mode from the outside: how long ``tether -p`` takes to write its first stream-json
line (``system``/``init``) and its ``result``, and to exit, for a one-response script against
the fake Messages API; the same for Claude Code's own CLI when the ``claude-agent-sdk`` wheel
bundles it, for comparison. Most of it is process start-up, which the warm daemon exists
to pay once.

    python bench/print_mode.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import summary

from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"
TETHER = Path(sys.executable).with_name("tether")


def claude_code() -> Path | None:
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return path if path.is_file() else None


def one_run(program: Path, tmp: Path) -> tuple[float, float, float]:
    """Seconds to the first line, to the result line, and to exit."""
    root = tmp / "ws"
    if not root.exists():
        shutil.copytree(FIXTURE, root)
    env = {
        **os.environ,
        "HOME": str(tmp / "home"),
        "TETHER_DATA_DIR": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "ANTHROPIC_API_KEY": "bench-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    with FakeAnthropicServer([[{"type": "text", "text": "Done."}]]) as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        argv = [str(program), "-p", "hi", "--output-format", "stream-json", "--verbose"]
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        first = result = 0.0
        for line in proc.stdout:
            now = time.monotonic() - started
            first = first or now
            if line.startswith('{"type": "result"') or '"type":"result"' in line:
                result = now
        proc.wait()
        ended = time.monotonic() - started
        api.assert_complete()
    return first, result, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    programs = [("tether -p", TETHER)]
    other = claude_code()
    if other is not None:
        programs.append(("claude -p (bundled with claude-agent-sdk)", other))
    for label, program in programs:
        firsts: list[float] = []
        results: list[float] = []
        exits: list[float] = []
        with tempfile.TemporaryDirectory() as tmp:
            one_run(program, Path(tmp))  # warm the file cache
            for _ in range(args.runs):
                first, result, ended = one_run(program, Path(tmp))
                firsts.append(first)
                results.append(result)
                exits.append(ended)
        print(label)
        print(f"  first line: {summary(firsts)}")
        print(f"  result:     {summary(results)}")
        print(f"  exit:       {summary(exits)}")


if __name__ == "__main__":
    main()
