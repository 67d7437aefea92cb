"""Frozen transcripts of every schema version load forever. Changing the record schema means
adding a version and a migration (transcript/migrate.py); these files are never edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tether.core.messages import Message
from tether.transcript.migrate import MIGRATIONS, migrate
from tether.transcript.resume import PARTLY_RAN
from tether.transcript.session import open_for_resume

ROOT = Path(__file__).parents[2] / "fixtures" / "transcripts"
CASES = [
    (version.name, path.name)
    for version in sorted(ROOT.iterdir())
    for path in sorted(version.glob("*.jsonl"))
]


def well_formed(messages: list[Message]) -> bool:
    pending: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            if pending:
                return False
            pending = {u.id for u in m.tool_uses}
        else:
            pending -= {r.tool_use_id for r in m.tool_results}
    return not pending


def test_there_are_fixtures_for_the_current_version() -> None:
    from tether.transcript.records import SCHEMA_VERSION

    assert (ROOT / f"v{SCHEMA_VERSION}").is_dir()
    assert len(CASES) >= 3


@pytest.mark.parametrize(("version", "name"), CASES)
async def test_fixture_resumes(tmp_path: Path, version: str, name: str) -> None:
    expected: dict[str, Any] = json.loads((ROOT / version / "expected.json").read_text())[name]
    path = tmp_path / name
    shutil.copy(ROOT / version / name, path)
    resumed, writer = await open_for_resume(path, path.stem)
    await writer.close()
    messages = resumed.messages
    assert [m.role for m in messages] == expected["roles"]
    assert well_formed(messages)
    if expected["last_text"]:
        assert messages[-1].text == expected["last_text"]
    assert resumed.turns == expected["turns"]
    assert resumed.mode == expected["mode"]
    assert len(resumed.todos) == expected["todos"]
    assert len(resumed.repairs) == expected["repairs"]
    if expected.get("partly_ran"):
        assert messages[-1].tool_results[-1].text == PARTLY_RAN
    if expected.get("interrupted_task"):
        assert expected["interrupted_task"] in messages[-1].text
    # After the repairs are appended, the file resumes cleanly with nothing left to repair.
    again, writer = await open_for_resume(path, path.stem)
    await writer.close()
    assert again.repairs == [] and [m.role for m in again.messages] == expected["roles"]


def test_migrations_upgrade_old_records_step_by_step() -> None:
    def rename(raw: dict[str, Any]) -> dict[str, Any]:
        out = dict(raw)
        out["renamed"] = out.pop("old")
        return out

    MIGRATIONS[1] = rename
    MIGRATIONS[2] = lambda raw: {**raw, "extra": True}
    try:
        upgraded = migrate({"v": 1, "old": "x"}, current=3)
    finally:
        del MIGRATIONS[1], MIGRATIONS[2]
    assert upgraded == {"v": 3, "renamed": "x", "extra": True}


def test_a_newer_version_is_refused_with_a_clear_error() -> None:
    from tether.errors import SessionError

    with pytest.raises(SessionError, match="newer Tether"):
        migrate({"v": 99}, current=1)
