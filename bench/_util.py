"""Shared helpers for the benchmark scripts."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def summary(samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"median {ms(statistics.median(ordered))}, p99 {ms(p99)}, "
        f"min {ms(ordered[0])}, max {ms(ordered[-1])} (n={len(ordered)})"
    )
