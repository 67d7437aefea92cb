"""Glob on a big tree: ``rg --files`` against the pure-Python walk (the fallback), same
pattern, same answer (checked), in the same run.

The tree: ``--files`` files (default 37,000) in nested directories, with a ``.gitignore``
that prunes a ``node_modules`` and a ``build`` directory holding a few thousand more.

    python bench/glob.py [--files 37000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import summary

from tether.core.tool_threads import shared_pool
from tether.tools.glob import find_files

LANE = shared_pool().lane()


def make_tree(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("node_modules/\nbuild/\n*.log\n")
    for i in range(files):
        d = root / f"pkg{i % 37}" / f"mod{i % 101}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i}.{('py', 'ts', 'md', 'log')[i % 4]}").write_bytes(b"")
    for ignored in ("node_modules/lib", "build/out"):
        d = root / ignored
        d.mkdir(parents=True)
        for i in range(2000):
            (d / f"x{i}.py").write_bytes(b"")


async def timed(base: Path, pattern: str, ripgrep: str | None, runs: int) -> list[float]:
    samples: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        await find_files(base, pattern, ripgrep, LANE)
        samples.append(time.perf_counter() - started)
    return samples


async def main(files: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as raw:
        root = Path(raw)
        make_tree(root, files)
        for pattern in ("**/*.py", "**/*"):
            with_rg = await find_files(root, pattern, "rg", LANE)
            walked = await find_files(root, pattern, None, LANE)
            assert sorted(f.rel for f in with_rg) == sorted(f.rel for f in walked)
            rg = await timed(root, pattern, "rg", runs)
            walk = await timed(root, pattern, None, runs)
            ratio = statistics.median(walk) / statistics.median(rg)
            print(f"Glob {pattern!r} over {files} files ({len(walked)} matches):")
            print(f"  rg --files: {summary(rg)}")
            print(f"  walk:       {summary(walk)}  ({ratio:.1f}x the ripgrep time)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=37_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.files, args.runs))
