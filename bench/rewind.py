"""What checkpointing a shell command's changes costs (rewind covers files changed by Bash).

On a tree of 10,000 text files (100 directories of 100 files of about 3 KB, plus 5,000
ignored files under ``node_modules/`` that are never read), through the real
``ShellCheckpoints`` hooks and ``WorkspaceSnapshots``:

1. the first command of a workspace: listing, stat of every file, and reading the texts
   into the cache (once per workspace);
2. every later command that changes 3 files: the snapshot before (listing + stat, reads
   only what changed since) and the comparison after (listing + stat + the changed files'
   texts from the cache) — the cost added to each Bash call that is not read-only;
3. the listing alone (``rg --files``), and the same walk in Python (no ripgrep);
4. the memory the cache holds (compressed) against the text it covers.

    python bench/rewind.py [--files 10000] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms, summary

from tether.session.checkpoints import Checkpoints
from tether.session.file_snapshot import WorkspaceSnapshots
from tether.session.shell_checkpoints import ShellCheckpoints
from tether.transcript.records import ProgressRecord

LINE = "def handler_{i}(request, response):  # handles request {i} of the service layer\n"


def make_tree(root: Path, files: int) -> int:
    """``files`` source files of about 3 KB, and ignored ones; returns the text bytes."""
    total = 0
    per_dir = 100
    for n in range(files):
        directory = root / "src" / f"pkg{n // per_dir:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        text = "".join(LINE.format(i=n * 40 + i) for i in range(36))
        (directory / f"mod{n % per_dir:03d}.py").write_text(text)
        total += len(text)
    (root / ".gitignore").write_text("node_modules/\n")
    for n in range(files // 2):
        directory = root / "node_modules" / f"dep{n // per_dir:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"index{n % per_dir:03d}.js").write_text("module.exports = {};\n")
    return total


async def one_command(hooks: ShellCheckpoints, root: Path, n: int) -> float:
    """One Bash call's added cost: the snapshot before and the comparison after."""
    call: dict[str, Any] = {"command": f"sed -i s/handler/h{n}/ src/pkg000/mod00{n % 3}.py"}
    started = time.perf_counter()
    await hooks.pre_tool_use("Bash", call, f"call-{n}")
    spent = time.perf_counter() - started
    for k in range(3):  # what the command does (not counted)
        path = root / "src" / f"pkg{k:03d}" / f"mod{n % 100:03d}.py"
        path.write_text(path.read_text() + f"# run {n}\n")
    started = time.perf_counter()
    await hooks.post_tool_use("Bash", call, f"call-{n}", "", False)
    return spent + time.perf_counter() - started


async def bench(files: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        text_bytes = make_tree(root, files)
        checkpoints = Checkpoints()
        records: list[ProgressRecord] = []
        snapshots = WorkspaceSnapshots(root)
        hooks = ShellCheckpoints(snapshots, checkpoints, "bench", records.append)

        checkpoints.begin("turn-0", None)
        cold = await one_command(hooks, root, 0)
        print(f"tree: {files} text files ({text_bytes / 1e6:.1f} MB), {files // 2} ignored")
        print(f"first command of a workspace (reads every text file once): {ms(cold)}")

        samples: list[float] = []
        for n in range(1, runs + 1):
            checkpoints.begin(f"turn-{n}", None)  # a turn each: every change is recorded
            samples.append(await one_command(hooks, root, n))
        print(f"each later command changing 3 files (before + after): {summary(samples)}")
        kept = sum(1 for r in records if r.event == "checkpoint")
        print(f"checkpoints recorded: {kept} (3 per command expected: {3 * (runs + 1)})")

        listing: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            await snapshots._list()  # pyright: ignore[reportPrivateUsage]
            listing.append(time.perf_counter() - started)
        print(f"  of which listing with rg --files: {summary(listing)}")
        walker = WorkspaceSnapshots(root)
        walker._rg = None  # pyright: ignore[reportPrivateUsage]
        walked: list[float] = []
        for _ in range(max(3, runs // 4)):
            started = time.perf_counter()
            await walker._list()  # pyright: ignore[reportPrivateUsage]
            walked.append(time.perf_counter() - started)
        print(f"  listing without ripgrep (Python walk): {summary(walked)}")
        print(
            f"cache: {snapshots.cached_bytes / 1e6:.2f} MB compressed for "
            f"{text_bytes / 1e6:.1f} MB of text ({text_bytes / snapshots.cached_bytes:.1f}:1)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(bench(args.files, args.runs))


if __name__ == "__main__":
    main()
