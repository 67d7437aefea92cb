"""Shared helpers for the benchmark scripts."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def summary(samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"median {ms(statistics.median(ordered))}, p99 {ms(p99)}, "
        f"min {ms(ordered[0])}, max {ms(ordered[-1])} (n={len(ordered)})"
    )


def four_turn_script() -> list[Any]:
    """The measured headless run: three parallel Reads, an Edit, a Bash echo, a text reply
    (for the fixture workspace ``tests/fixtures/workspaces/basic``)."""

    def tool(name: str, **inp: Any) -> dict[str, Any]:
        return {"type": "tool_use", "name": name, "input": inp}

    return [
        [
            tool("Read", file_path="src/app.py"),
            tool("Read", file_path="README.md"),
            tool("Read", file_path="src/intl.txt"),
        ],
        [tool("Edit", file_path="src/app.py", old_string="Bye, ", new_string="Goodbye, ")],
        [tool("Bash", command="echo done")],
        [{"type": "text", "text": "Finished."}],
    ]
