"""A workspace's warnings (bad settings, no sandbox) are said once, by the front door that
opened it: not logged besides (print mode showed each twice, once as a log line), and on a
reload only what the new files brought is logged."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tether.settings.trust import TrustStore
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace

from .conftest import MISSING, WORKING


def make(root: Path, tmp_path: Path, *, sandbox_works: bool) -> Workspace:
    return Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        user_settings=False,
        trust=TrustStore(tmp_path / "trust.json"),
        sandbox_probe=WORKING if sandbox_works else MISSING,
        watch_settings=False,
    )


async def test_each_warning_once_and_not_logged(
    root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (root / ".tether").mkdir()
    (root / ".tether" / "settings.json").write_text(json.dumps({"bogus": 1}))
    with caplog.at_level(logging.INFO):
        workspace = make(root, tmp_path, sandbox_works=False)
    warnings = workspace.warnings
    assert len(warnings) == 2
    assert warnings[0].startswith("settings: ") and "bogus: unknown key" in warnings[0]
    sandbox = warnings[1]
    assert sandbox.startswith("Shell sandbox unavailable: bubblewrap (bwrap) is not installed")
    # What really happens without a sandbox, mode by mode (bypassPermissions runs unasked).
    assert "bypassPermissions mode (it runs unasked)" in sandbox and "dontAsk" in sandbox
    assert not caplog.records
    assert workspace.warnings == warnings  # asking again does not add anything

    (root / ".tether" / "settings.json").write_text(json.dumps({"bogus": 1, "model": 5}))
    with caplog.at_level(logging.WARNING):
        workspace.reload_settings()
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 1 and "setting model" in logged[0]
    await workspace.close()


async def test_a_working_sandbox_and_good_settings_say_nothing(root: Path, tmp_path: Path) -> None:
    workspace = make(root, tmp_path, sandbox_works=True)
    assert workspace.warnings == []
    await workspace.close()
