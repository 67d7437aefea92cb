"""``~`` is the home of the caller a session works for, not of the process that runs it: in
a path the model gives, a ``~/`` permission rule, the settings' additional directories and
an ``@~/`` import of the instructions. Each check uses a caller whose ``HOME`` is not this
process's, so reading this process's would fail it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.context.instructions import load_instructions
from tether.core.environ import Caller, expand_home
from tether.errors import ToolError
from tether.permissions.rules import path_matches
from tether.settings.load import SettingSources
from tether.settings.trust import TrustStore
from tether.tools.context import ToolConfig
from tether.tools.paths import resolve_tool_path
from tether.workspace.guard import WorkspaceGuard


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The caller's home, with notes in it; this process's HOME is elsewhere."""
    monkeypatch.setenv("HOME", str(tmp_path / "the-daemons-home"))
    home = tmp_path / "caller-home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "todo.txt").write_text("the caller's own notes\n")
    return home


def test_expand_home_reads_the_callers_home(home: Path) -> None:
    caller = {"HOME": str(home)}
    assert expand_home("~", caller) == str(home)
    assert expand_home("~/notes", caller) == f"{home}/notes"
    assert expand_home("~/notes", {"HOME": str(home) + "/"}) == f"{home}/notes"
    assert expand_home("~/x", {"HOME": "/"}) == "/x"
    assert expand_home("notes/~", caller) == "notes/~"
    assert expand_home("~/x", None) == os.path.expanduser("~/x")  # in-process: this one's
    assert expand_home("~root/x", caller) == os.path.expanduser("~root/x")  # the account's


def test_a_model_path_with_a_tilde_is_in_the_callers_home(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = [home / "notes"]
    found = resolve_tool_path("~/notes/todo.txt", workspace, notes, {"HOME": str(home)})
    assert found == (home / "notes" / "todo.txt").resolve()
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_tool_path("~/notes/todo.txt", workspace, notes)  # this process's ~: elsewhere


def test_a_tilde_rule_covers_the_callers_home(home: Path, tmp_path: Path) -> None:
    target = (home / "notes" / "todo.txt").resolve()
    assert path_matches("~/notes/**", target, tmp_path, home.resolve())
    assert not path_matches("~/notes/**", target, tmp_path)  # this process's home


def test_the_settings_additional_directories_are_in_the_callers_home(
    home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    guard = WorkspaceGuard(
        workspace,
        {"permissions": {"additionalDirectories": ["~/notes"]}},
        sources=SettingSources(user=False, project=False, local=False),
        trust=TrustStore(tmp_path / "trusted.json"),
        watch=False,
        data=tmp_path / "data",
    )
    try:
        config = guard.configure_tools(ToolConfig(caller_env=Caller({"HOME": str(home)})))
    finally:
        guard.close()
    assert config.additional_dirs == [(home / "notes").resolve()]


def test_an_instructions_import_of_a_tilde_path_is_the_callers(home: Path, tmp_path: Path) -> None:
    workspace = home / "project"  # under the caller's home, so the import is allowed
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Read @~/project/more.md first.\n")
    (workspace / "more.md").write_text("the caller's extra rules\n")
    files = load_instructions(workspace, tmp_path / "none.md", caller={"HOME": str(home)})
    assert "the caller's extra rules" in files[-1].text
