"""Every test runs print mode in-process unless it asks for the warm daemon: a test that
wants the daemon sets ``TETHER_NO_DAEMON=0`` and a runtime directory of its own (and stops
the daemon it started), so no daemon outlives the test that started it."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _print_mode_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_NO_DAEMON", "1")
