"""Settings: merge order, list merging, lenient validation with warnings that name the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.settings.load import SettingSources, load_settings, merge


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "tether" / "settings.json"


def test_merge_order_lists_merge_and_scalars_take_the_most_specific(
    tmp_path: Path, user_config: Path
) -> None:
    root = tmp_path / "ws"
    write(user_config, {"model": "user-model", "permissions": {"allow": ["Read"], "deny": ["A"]}})
    write(root / ".tether" / "settings.json", {"model": "project", "permissions": {"allow": ["B"]}})
    write(
        root / ".tether" / "settings.local.json",
        {"permissions": {"allow": ["Read", "C"], "defaultMode": "acceptEdits"}},
    )
    overrides = {"permissions": {"defaultMode": "plan", "deny": ["D"]}}
    loaded = load_settings(root, overrides, trusted=True)
    s = loaded.settings
    assert s.model == "project"
    assert s.permissions.allow == ["Read", "B", "C"]
    assert s.permissions.deny == ["A", "D"]
    assert s.permissions.default_mode == "plan"
    assert len(loaded.sources) == 3 and loaded.warnings == []


def test_setting_sources_pick_the_files(tmp_path: Path, user_config: Path) -> None:
    root = tmp_path / "ws"
    write(user_config, {"permissions": {"allow": ["U"]}})
    write(root / ".tether" / "settings.json", {"permissions": {"allow": ["P"]}})
    write(root / ".tether" / "settings.local.json", {"permissions": {"allow": ["L"]}})

    def allowed(text: str) -> list[str]:
        sources = SettingSources.parse(text)
        return load_settings(root, sources=sources, trusted=True).settings.permissions.allow

    assert allowed("user,project,local") == ["U", "P", "L"]
    assert allowed("") == []  # the SDKs' settingSources: [] loads no file at all
    assert allowed("project") == ["P"]
    assert allowed(" local , user") == ["U", "L"]
    with pytest.raises(ValueError, match="unknown setting source managed"):
        SettingSources.parse("user,managed")


def test_hooks_from_several_files_are_merged(tmp_path: Path, user_config: Path) -> None:
    root = tmp_path / "ws"
    hook = {"hooks": [{"type": "command", "command": "a"}]}
    write(user_config, {"hooks": {"Stop": [hook]}})
    write(root / ".tether" / "settings.json", {"hooks": {"Stop": [{"matcher": "", **hook}]}})
    s = load_settings(root, trusted=True).settings
    assert len(s.hooks["Stop"]) == 2


def test_bad_values_warn_naming_the_key_and_fall_back(tmp_path: Path, user_config: Path) -> None:
    root = tmp_path / "ws"
    write(
        root / ".tether" / "settings.json",
        {
            "permissions": {"defaultMode": "yolo", "allow": ["Read"]},
            "sandbox": {"allowNetwork": "sometimes"},
            "maxTurns": "many",
            "hooks": {
                "Notification": [],
                "Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}],
            },
            "permisions": {},
        },
    )
    loaded = load_settings(root, sources=SettingSources(user=False), trusted=True)
    text = "\n".join(loaded.warnings)
    for key in (
        "permissions.defaultMode",
        "sandbox.allowNetwork",
        "maxTurns",
        "hooks.Notification",
    ):
        assert key in text, key
    assert "permisions: unknown key" in text
    s = loaded.settings
    assert s.permissions.default_mode == "default" and s.permissions.allow == ["Read"]
    assert s.max_turns is None and not s.sandbox.allow_network


def test_unreadable_file_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root / ".tether" / "settings.json", "{not json")
    write(root / ".tether" / "settings.local.json", "[1, 2]")
    loaded = load_settings(root, sources=SettingSources(user=False))
    assert len(loaded.warnings) == 2 and loaded.settings.permissions.allow == []


def test_merge_does_not_duplicate_list_items() -> None:
    merged = merge({"permissions": {"allow": ["A"]}}, {"permissions": {"allow": ["A", "B"]}})
    assert merged == {"permissions": {"allow": ["A", "B"]}}


def test_trust_dialog_is_found_through_editor_wrappers() -> None:
    from tether.permissions.trust_dialog import find_trust_dialog

    class Dialog:
        async def trust_workspace(self, root: Path, withheld: list[str]) -> bool:
            return True

    class Wrapper:
        def __init__(self, inner: object) -> None:
            self.inner = inner

    dialog = Dialog()
    assert find_trust_dialog(Wrapper(Wrapper(dialog))) is dialog
    assert find_trust_dialog(Wrapper(object())) is None
