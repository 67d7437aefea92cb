"""What finding the control plane costs in a big tree, against the ``main`` branch's walk.

Trees of ``--sizes`` entries (folders of 1,000 empty files, a nested repository at the
bottom), built once on ``/dev/shm`` (else ``/var/tmp``). For each: ``Discovery().found``
here (the bounded walk, then the whole tree by name when the budget runs out), whether it
found the nested repository, and main's ``Discovery().found`` (its ``server/`` extracted
with ``git archive``, imported in a process of its own) with the same question.

    python bench/walk.py [--sizes 30000,300000] [--ref main] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms

MEASURE = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tether.sandbox.protect import Discovery
root, runs = Path(sys.argv[2]), int(sys.argv[3])
times = []
for _ in range(runs):
    t = time.perf_counter(); found = Discovery().found(root); times.append(time.perf_counter() - t)
lib = str(root / "deep" / "lib" / ".git")
print(json.dumps({"s": min(times), "found": any(str(p) == lib for p in found.entries)}))
"""


def tree(base: Path, size: int) -> Path:
    root = base / f"t{size}"
    if root.is_dir():
        return root
    for d in range(max(1, size // 1000)):
        folder = root / f"d{d % 30}" / f"s{d}"
        folder.mkdir(parents=True)
        for i in range(1000):
            (folder / f"f{i}").touch()
    lib = root / "deep" / "lib"
    lib.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(lib)], check=True)
    return root


def measure(server: Path, root: Path, runs: int) -> dict[str, float | bool]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(server), str(root), str(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30000,300000")
    parser.add_argument("--ref", default="main")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    base_dir = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path("/var/tmp")
    work = Path(tempfile.mkdtemp(prefix="tether-walk-", dir=base_dir))
    try:
        ref = work / "ref"
        ref.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.ref, "server"], cwd=here, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(ref)], input=archive.stdout, check=True)
        for size in (int(s) for s in args.sizes.split(",")):
            t = time.perf_counter()
            root = tree(work, size)
            built = time.perf_counter() - t
            ours = measure(here / "server", root, args.runs)
            theirs = measure(ref / "server", root, args.runs)
            print(
                f"{size:>8} entries (built in {built:.1f} s): here {ms(float(ours['s']))}"
                f" (nested repository found: {ours['found']}), {args.ref}"
                f" {ms(float(theirs['s']))} (found: {theirs['found']}),"
                f" ratio {float(ours['s']) / float(theirs['s']):.2f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
