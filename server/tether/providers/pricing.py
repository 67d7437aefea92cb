"""What a model call cost, from its token usage and a small table of Claude list prices.

Prices are USD per million tokens at standard (not batch, not long-context) rates. Prompt
caching bills a cache write (5-minute TTL) at 1.25x the input price and a cache read at
0.1x. Unknown models (local ones included) have no price: ``cost_usd`` returns ``None`` and
the editor shows tokens only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tether.providers.base import TokenUsage

CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float


# First match wins: older generations with different prices come before the family catch-all.
_PRICES: tuple[tuple[re.Pattern[str], Price], ...] = (
    (re.compile(r"claude-opus-4(-[01])?(-\d{8})?$"), Price(15.0, 75.0)),  # Opus 4, 4.1
    (re.compile(r"claude-3-opus"), Price(15.0, 75.0)),
    (re.compile(r"claude-opus"), Price(5.0, 25.0)),  # Opus 4.5 and later
    (re.compile(r"claude-(3-[57]-)?sonnet"), Price(3.0, 15.0)),
    (re.compile(r"claude-3-5-haiku"), Price(0.8, 4.0)),
    (re.compile(r"claude-3-haiku"), Price(0.25, 1.25)),
    (re.compile(r"claude-haiku"), Price(1.0, 5.0)),  # Haiku 4.5 and later
)


def price(model: str) -> Price | None:
    name = _normalize(model)
    for pattern, found in _PRICES:
        if pattern.match(name):
            return found
    return None


def cost_usd(model: str, usage: TokenUsage) -> float | None:
    """The list-price cost of one call, or ``None`` for a model we have no price for."""
    found = price(model)
    if found is None:
        return None
    per_input = found.input_per_mtok / 1_000_000
    return (
        usage.input_tokens * per_input
        + usage.cache_creation_tokens * per_input * CACHE_WRITE_FACTOR
        + usage.cache_read_tokens * per_input * CACHE_READ_FACTOR
        + usage.output_tokens * found.output_per_mtok / 1_000_000
    )


def _normalize(model: str) -> str:
    """``claude-...`` from cloud spellings: ``anthropic.claude-x-v1:0``, ``claude-x@2025...``."""
    name = model.lower()
    start = name.find("claude")
    if start < 0:
        return name
    name = re.split(r"[@:]", name[start:])[0]
    return re.sub(r"-v\d+$", "", name)
