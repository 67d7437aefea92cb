"""Greedy partition of tool calls, in model order.

Consecutive concurrency-safe calls form one concurrent batch; every other call is a serial
batch of its own. [read A, read B, edit C, bash D, read E] -> [A, B] [C] [D] [E].
The streaming executor applies the same rule incrementally.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_CONCURRENCY = 10


@dataclass(frozen=True)
class Batch(Generic[T]):
    calls: tuple[T, ...]
    concurrent: bool


def partition(calls: Sequence[T], is_safe: Callable[[T], bool]) -> list[Batch[T]]:
    batches: list[Batch[T]] = []
    run: list[T] = []
    for call in calls:
        if is_safe(call):
            run.append(call)
            continue
        if run:
            batches.append(Batch(tuple(run), True))
            run = []
        batches.append(Batch((call,), False))
    if run:
        batches.append(Batch(tuple(run), True))
    return batches
