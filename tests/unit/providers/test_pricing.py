"""List-price cost of a call."""

from __future__ import annotations

import pytest

from tether.providers.base import TokenUsage
from tether.providers.pricing import cost_usd, price


def test_sonnet_cost_includes_cache_reads_and_writes():
    usage = TokenUsage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_tokens=1_000_000,
        cache_creation_tokens=1_000_000,
    )
    # input 3 + output 15 + cache write 3 * 1.25 + cache read 3 * 0.1
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(3 + 15 + 3.75 + 0.3)


@pytest.mark.parametrize(
    ("model", "input_price", "output_price"),
    [
        ("claude-opus-4-1-20250805", 15.0, 75.0),
        ("claude-opus-4-20250514", 15.0, 75.0),
        ("claude-opus-4-5", 5.0, 25.0),
        ("claude-opus-4-6", 5.0, 25.0),
        ("claude-sonnet-4-6-20250929", 3.0, 15.0),
        ("claude-3-7-sonnet-latest", 3.0, 15.0),
        ("claude-haiku-4-5", 1.0, 5.0),
        ("claude-3-5-haiku-20241022", 0.8, 4.0),
        ("anthropic.claude-opus-4-1-20250805-v1:0", 15.0, 75.0),  # Bedrock
        ("claude-sonnet-4@20250514", 3.0, 15.0),  # Vertex
    ],
)
def test_families_by_name(model, input_price, output_price):
    found = price(model)
    assert found is not None
    assert (found.input_per_mtok, found.output_per_mtok) == (input_price, output_price)


def test_unknown_models_have_no_price():
    assert cost_usd("qwen2.5-coder:32b", TokenUsage(10, 10)) is None
    assert cost_usd("scripted", TokenUsage()) is None
