"""The backoff policy and the retry loop, without a server."""

from __future__ import annotations

import pytest

from tether.errors import ModelError
from tether.providers.base import Retrying
from tether.providers.retry import (
    Failure,
    Opened,
    RetryPolicy,
    parse_retry_after,
    should_retry_header,
    with_retries,
)


def test_backoff_doubles_with_downward_jitter_and_a_cap():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    for attempt, nominal in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (10, 5.0)]:
        for _ in range(20):
            assert 0.75 * nominal <= policy.delay_s(attempt) <= nominal


def test_retry_after_wins_but_is_capped():
    policy = RetryPolicy(base_delay_s=1.0, retry_after_cap_s=60.0)
    assert policy.delay_s(1, retry_after_s=7.5) == 7.5
    assert policy.delay_s(1, retry_after_s=3600) == 60.0
    assert policy.delay_s(1, retry_after_s=0) <= 1.0  # 0 means "no advice"


def test_parse_retry_after():
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None


def test_should_retry_header():
    assert should_retry_header({"x-should-retry": "true"}) is True
    assert should_retry_header({"x-should-retry": "false"}) is False
    assert should_retry_header({}) is None


class Flaky:
    def __init__(self, failures: int):
        self.failures = failures
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("boom")
        return "result"


def classify(exc: Exception) -> Failure | None:
    if isinstance(exc, ConnectionError):
        return Failure("boom", True, ModelError("boom", status=503), retry_after_s=0.001)
    return None


async def test_with_retries_yields_retrying_then_the_result():
    policy = RetryPolicy(max_retries=3)
    items = [item async for item in with_retries(policy, Flaky(2), classify)]
    assert items == [Retrying(1, 0.001, "boom"), Retrying(2, 0.001, "boom"), Opened("result")]


async def test_with_retries_gives_up():
    policy = RetryPolicy(max_retries=1)
    with pytest.raises(ModelError, match="boom; gave up after 1 retries") as caught:
        [item async for item in with_retries(policy, Flaky(5), classify)]
    assert caught.value.retryable and caught.value.status == 503


async def test_unclassified_errors_propagate():
    async def broken() -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        [item async for item in with_retries(RetryPolicy(), broken, classify)]


async def test_non_retryable_failures_raise_their_error():
    def fatal(exc: Exception) -> Failure:
        return Failure("bad", False, ModelError("bad request", status=400))

    with pytest.raises(ModelError, match="bad request"):
        [item async for item in with_retries(RetryPolicy(), Flaky(1), fatal)]
