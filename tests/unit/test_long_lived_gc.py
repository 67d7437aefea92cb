"""A process that lives on (the warm daemon, an editor's server) never freezes its heap: what
is garbage at that moment, other sessions' included, would never be collected again. Only a
one-shot run freezes (its imports, and a big session it loads)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tether.transcript.load import FREEZE_AFTER, keep_out_of_gc
from tether.warmup import import_for_run, warm_imports


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()  # an in-process run earlier in this test process may have frozen it
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_warming_and_loading_a_big_session_freeze_nothing_in_a_process_that_lives_on() -> None:
    warm_imports(["json", "tether.transcript.replay"])
    keep_out_of_gc(FREEZE_AFTER + 1)
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("unfrozen")
def test_a_one_shot_run_freezes_its_imports_and_its_big_session() -> None:
    import_for_run(["json"])
    frozen = gc.get_freeze_count()
    assert frozen > 0
    garbage = [[n] for n in range(1000)]  # objects made after: a big session's records
    keep_out_of_gc(FREEZE_AFTER + 1)
    assert gc.get_freeze_count() >= frozen + len(garbage)
