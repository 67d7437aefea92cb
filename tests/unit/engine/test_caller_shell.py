"""The system prompt names the shell of the user the session works for: its caller's
``SHELL``, ``/bin/sh`` when the caller has none, never this process's (in the warm daemon,
whoever started it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.environ import Caller
from tether.editor.disk import DiskEditor
from tether.engine.context import ContextAssembler
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.settings.trust import TrustStore
from tether.transcript.store import TranscriptStore
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions


def _prompt(assembler: ContextAssembler) -> str:
    return "\n".join(block.text for block in assembler.system())


@pytest.fixture(autouse=True)
def daemon_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/usr/bin/daemons-fish")


def test_a_caller_without_shell_gets_sh_not_this_processs(tmp_path: Path) -> None:
    text = _prompt(ContextAssembler(cwd=tmp_path, model="m", caller=Caller({"PATH": "/bin"})))
    assert "/bin/sh" in text and "daemons-fish" not in text


def test_a_caller_with_no_variables_at_all_is_still_a_caller(tmp_path: Path) -> None:
    text = _prompt(ContextAssembler(cwd=tmp_path, model="m", caller=Caller({})))
    assert "/bin/sh" in text and "daemons-fish" not in text


def test_each_caller_gets_its_own_shell(tmp_path: Path) -> None:
    zsh = _prompt(ContextAssembler(cwd=tmp_path, model="m", caller=Caller({"SHELL": "/bin/zsh"})))
    assert "/bin/zsh" in zsh and "daemons-fish" not in zsh


def test_in_process_the_shell_is_this_processs(tmp_path: Path) -> None:
    assert "daemons-fish" in _prompt(ContextAssembler(cwd=tmp_path, model="m"))


async def test_a_session_names_its_new_owners_shell(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    workspace = Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        provider_factory=lambda _m, _r: ScriptedProvider(parse_script([]), model="scripted"),
        user_settings=False,
        trust=TrustStore(tmp_path / "trust.json"),
        watch_settings=False,
    )
    try:
        session = workspace.new_session(
            DiskEditor(), SessionOptions(caller=Caller({"PATH": "/bin"}))
        )
        first = _prompt(session.engine.assembler)
        assert "/bin/sh" in first and "daemons-fish" not in first
        await workspace.use_caller(session.session_id, Caller({"SHELL": "/bin/zsh"}))
        assert "/bin/zsh" in _prompt(session.engine.assembler)
    finally:
        await workspace.close()
