"""The list of trusted folders: a damaged file loses nobody's trust decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.settings.trust import TrustStore


@pytest.mark.parametrize(
    ("damaged", "readable"),
    [
        ('{"trusted": ["/kept", 7, null]}', ["/kept"]),  # well-formed entries are kept
        ('{"trusted": ["/lost",', []),  # not JSON: nothing can be read
        ('["/a"]', []),  # no "trusted" list
    ],
)
def test_a_damaged_file_is_kept_before_it_is_written_anew(
    tmp_path: Path, damaged: str, readable: list[str]
) -> None:
    path = tmp_path / "trusted-workspaces.json"
    path.write_text(damaged)
    store = TrustStore(path)
    roots, problem = store.read()
    assert roots == readable and problem is not None and str(path) in problem
    folder = tmp_path / "project"
    folder.mkdir()
    store.trust(folder)
    assert store.damaged_copy.read_text() == damaged
    assert json.loads(path.read_text()) == {"trusted": [*readable, str(folder.resolve())]}
    assert store.problem() is None and store.is_trusted(folder)


def test_a_sound_file_is_extended_without_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "trusted-workspaces.json"
    path.write_text(json.dumps({"trusted": ["/other"]}))
    store = TrustStore(path)
    store.trust(tmp_path)
    assert json.loads(path.read_text())["trusted"] == ["/other", str(tmp_path.resolve())]
    assert not store.damaged_copy.exists()
