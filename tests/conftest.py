"""Every test runs print mode in-process unless it asks for the warm daemon: a test that
wants the daemon sets ``TETHER_NO_DAEMON=0`` and a runtime directory of its own (and stops
the daemon it started), so no daemon outlives the test that started it."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(autouse=True)
def _print_mode_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_NO_DAEMON", "1")


REQUIRE_SANDBOX = os.environ.get("TETHER_REQUIRE_SANDBOX") == "1"
"""Set by CI (``.ci/run``): a security test whose facility does not work fails there."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs_sandbox: needs the shell sandbox (bubblewrap and the gate); fails instead of "
        "skipping under TETHER_REQUIRE_SANDBOX=1 or when bubblewrap is installed",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_sandbox") is None:
        return
    from tether.sandbox import probe

    status = probe()
    if status.available:
        return
    why = f"the shell sandbox cannot run here: {status.problem}"
    if REQUIRE_SANDBOX or shutil.which("bwrap") is not None:
        pytest.fail(f"{why} (installed or required, so this is a failure, not a skip)")
    pytest.skip(why)
