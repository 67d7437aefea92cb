"""What guarding against bad input costs on the paths every message and Read take:

1. ``parse_json`` (bounded depth) against plain ``json.loads``, on the messages an editor
   sends most: a keystroke's didChange, the didOpen of a 1 MB source file (bracket-heavy, so
   the depth walk runs), a diagnostics notification with 1,000 entries, a prompt. Printed as
   the ratio in the same run (target: well under a microsecond added to a small message).
2. Read with an offset of a 200 MB file: peak RSS of a process that streams the lines
   (``read_line_range``) against one that reads the whole text and splits it (what Read did
   before), each in a fresh process with the modules already imported; and their times.

    python bench/bad_input.py [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tether.core.json_input import parse_json

FIXTURE = Path(__file__).parent.parent / "server" / "tether" / "lsp" / "handlers.py"


def messages() -> dict[str, bytes]:
    source = FIXTURE.read_text() * (1_000_000 // len(FIXTURE.read_text()) + 1)
    change = {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {
            "textDocument": {"uri": "file:///w/a.py", "version": 12},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 10, "character": 4},
                        "end": {"line": 10, "character": 4},
                    },
                    "text": "x",
                }
            ],
        },
    }
    opened = {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {
            "textDocument": {
                "uri": "file:///w/a.py",
                "languageId": "python",
                "version": 1,
                "text": source[:1_000_000],
            }
        },
    }
    diagnostic = {
        "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 9}},
        "severity": 1,
        "source": "pyright",
        "message": 'Argument of type "int" cannot be assigned to parameter "x"',
    }
    diagnostics = {
        "jsonrpc": "2.0",
        "method": "tether/diagnostics",
        "params": {"uri": "file:///w/a.py", "diagnostics": [diagnostic] * 1000},
    }
    prompt = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tether/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "Fix the bug " * 40}]},
    }
    return {
        "didChange (keystroke)": json.dumps(change).encode(),
        "didOpen (1 MB source)": json.dumps(opened).encode(),
        "diagnostics (1,000)": json.dumps(diagnostics).encode(),
        "prompt": json.dumps(prompt).encode(),
    }


def best(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def parse_costs() -> None:
    print("1. parse_json against json.loads (best of N, same run)")
    for name, body in messages().items():
        runs = 30 if len(body) > 100_000 else 2000
        plain = best(lambda b=body: json.loads(b), runs)
        bounded = best(lambda b=body: parse_json(b), runs)
        print(
            f"   {name:24} {len(body):>9,} B  json.loads {plain * 1e6:9.1f} us  "
            f"parse_json {bounded * 1e6:9.1f} us  ratio {bounded / plain:.2f}"
        )


CHILD = """
import resource, sys, time
from pathlib import Path
path, mode = Path(sys.argv[1]), sys.argv[2]
from tether.editor.disk import read_text_file
from tether.tools.edit_match import split_lines
from tether.tools.read_lines import read_line_range
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if mode == "stream":
    part = read_line_range(path, 1_500_000, 50, 2000)
    shown = len(part.lines)
else:
    lines = split_lines(read_text_file(path))
    shown = len(lines[1_499_999:1_500_049])
took = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{(after - before) / 1024:.1f} {after / 1024:.0f} {took * 1000:.0f} {shown}")
"""


def read_memory(megabytes: int) -> None:
    print(f"2. Read offset=1,500,000 limit=50 of a {megabytes} MB file (fresh process each)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.log"
        line = "2026-03-02T09:14:03.512Z INFO request served in 12 ms from cache hit\n"
        count = megabytes * 1024 * 1024 // len(line)
        with path.open("w") as f:
            for start in range(0, count, 100_000):
                f.write(line * min(100_000, count - start))
        results = {}
        for mode in ("stream", "whole"):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(path), mode],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            results[mode] = (float(out[1]), float(out[2]))
            print(
                f"   {mode:7} peak RSS {out[1]:>5} MB (+{out[0]} MB for the read)   "
                f"{out[2]:>6} ms   ({out[3]} lines)"
            )
        ratio = results["whole"][0] / results["stream"][0]
        print(f"   peak RSS of the whole-file read / the streamed read: {ratio:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    parse_costs()
    read_memory(args.mb)


if __name__ == "__main__":
    main()
