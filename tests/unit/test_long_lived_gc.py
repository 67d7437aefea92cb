"""A process that lives on (the warm daemon, an editor's server) freezes its heap once, at
the end of its start-up warm-up and right after a full collection, so nothing frozen is
garbage; after that it never freezes again: what is garbage at a later moment, other
sessions' included, would never be collected. A one-shot run freezes its imports, and a
big session it loads."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tether import warmup
from tether.transcript.load import FREEZE_AFTER, keep_out_of_gc
from tether.warmup import import_for_run, settle_start_up, warm_imports


class _Node:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    gc.unfreeze()  # an in-process run earlier in this test process may have frozen it
    monkeypatch.setattr(warmup, "_settled", False)
    monkeypatch.setattr(warmup, "_one_shot", False)
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_start_up_is_frozen_once_after_its_garbage_is_collected() -> None:
    warm_imports(["json", "tether.transcript.replay"])
    garbage = _Node()  # a cycle start-up left behind
    gone = weakref.ref(garbage)
    kept = [_Node() for _ in range(100)]  # what start-up keeps
    del garbage
    settle_start_up()
    assert gone() is None, "garbage made during start-up was frozen instead of collected"
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept)
    later = [[n] for n in range(1000)]  # a session's objects, made after start-up
    settle_start_up()
    keep_out_of_gc(FREEZE_AFTER + 1)  # loading a big session in a process that lives on
    # (Frozen objects other threads let go of leave the count: it may only shrink.)
    assert gc.get_freeze_count() <= frozen, "a process that lives on froze again"
    assert later


@pytest.mark.usefixtures("unfrozen")
def test_a_one_shot_run_freezes_its_imports_and_its_big_session() -> None:
    import_for_run(["json"])
    frozen = gc.get_freeze_count()
    assert frozen > 0
    garbage = [[n] for n in range(1000)]  # objects made after: a big session's records
    keep_out_of_gc(FREEZE_AFTER + 1)
    assert gc.get_freeze_count() >= frozen + len(garbage)
