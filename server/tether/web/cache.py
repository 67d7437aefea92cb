"""A small time-limited cache of fetched pages (15 minutes, as Claude Code keeps them)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

V = TypeVar("V")

TTL_S = 15 * 60
MAX_ENTRIES = 64


@dataclass
class TtlCache(Generic[V]):
    ttl_s: float = TTL_S
    max_entries: int = MAX_ENTRIES
    clock: Callable[[], float] = time.monotonic
    _items: OrderedDict[str, tuple[float, V]] = field(
        default_factory=lambda: OrderedDict[str, tuple[float, V]]()
    )

    def get(self, key: str) -> V | None:
        hit = self._items.get(key)
        if hit is None:
            return None
        stored, value = hit
        if self.clock() - stored > self.ttl_s:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    def put(self, key: str, value: V) -> None:
        self._items[key] = (self.clock(), value)
        self._items.move_to_end(key)
        while len(self._items) > self.max_entries:
            self._items.popitem(last=False)
