"""Deciding whether an edit the client said it applied is in the text it then reported."""

from __future__ import annotations

import asyncio
import time

import pytest

from tether.lsp.confirm import ChangeLatency, VersionWatch, changed_size, judge

OLD = "def greet(name):\n    return 'Hello, ' + name\n\n\ndef bye():\n    pass\n"
NEW = OLD.replace("'Hello, '", "'Hi, '")


def test_changed_size_counts_removed_and_inserted_characters() -> None:
    assert changed_size(OLD, OLD) == 0
    assert changed_size(OLD, NEW) == len("ello") + len("i")
    assert changed_size("a\n", "a\nb\n") == 2


@pytest.mark.parametrize(
    ("now", "verdict"),
    [
        (NEW, "applied"),
        (OLD, "skipped"),
        (NEW + "# typed after the edit\n", "applied"),
        (OLD.replace("def bye", "def bye_user"), "skipped"),  # typed before; edit skipped
    ],
)
def test_judge(now: str, verdict: str) -> None:
    assert judge(OLD, NEW, now) == verdict


def test_text_as_far_from_both_sides_is_unknown() -> None:
    # Someone else rewrote the very line the edit changed.
    assert judge("a\nb\n", "a\nX\n", "a\nY\n") == "unknown"


def test_latency_bound_grows_with_what_the_client_needed() -> None:
    latency = ChangeLatency(floor=5.0, cap=30.0)
    assert latency.bound == 5.0
    latency.observe(0.2)
    assert latency.bound == 5.0
    latency.observe(12.0)
    assert latency.bound == 18.0
    latency.observe(100.0)
    assert latency.bound == 30.0


async def test_a_late_report_still_teaches_the_next_wait() -> None:
    watch = VersionWatch()
    watch.latency = ChangeLatency(floor=0.05, cap=10.0)
    confirmed = await watch.confirm("file:///a.py", 2, time.monotonic(), lambda: True)
    assert confirmed is False and watch.latency.slowest == 0.0
    await asyncio.sleep(0.1)
    watch.changed("file:///a.py", 2)
    await asyncio.sleep(0)
    assert watch.latency.slowest >= 0.1


async def test_a_later_keystroke_teaches_nothing() -> None:
    watch = VersionWatch()
    watch.latency = ChangeLatency(floor=0.05, cap=10.0)
    confirmed = await watch.confirm("file:///a.py", 2, time.monotonic(), lambda: False)
    assert confirmed is False
    watch.changed("file:///a.py", 3)  # the user typed; the edit is not in that text
    await asyncio.sleep(0)
    assert watch.latency.slowest == 0.0


async def test_versions_resolve_waiters_at_or_past_the_wanted_one() -> None:
    watch = VersionWatch()
    low, high = watch.reached("k", 2), watch.reached("k", 5)
    watch.changed("k", 3)
    assert low.done() and low.result() is True and not high.done()
    watch.changed("k", 7)
    assert high.done()
