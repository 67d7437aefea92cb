"""The Bash analysis reads the variables of the caller whose shell runs the command, never
this process's: in the warm daemon these are whoever started it."""

from __future__ import annotations

import os

import pytest

from tether.core.environ import Caller
from tether.permissions.bash_suggest import suggest_bash_rule
from tether.permissions.shell import parse_command
from tether.permissions.shell.effects import effects

from .conftest import MakeCtx, decide_on


def _only(line: str):
    commands = parse_command(line)
    assert commands is not None and len(commands) == 1
    return commands[0]


def test_cdpath_is_the_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CDPATH", raising=False)
    cd = _only("cd security")
    assert effects(cd, Caller({"CDPATH": "/etc"})).read_only is False
    monkeypatch.setenv("CDPATH", "/etc")  # this process's: not the caller's
    assert effects(cd, Caller({"PATH": "/bin"})).read_only is True


def test_a_name_is_shell_local_by_the_callers_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("build_dir", "/daemon-starter")
    line = _only("build_dir=out")
    assert effects(line, Caller({"PATH": "/bin"})).read_only is True
    monkeypatch.delenv("build_dir")
    assert effects(line, Caller({"build_dir": "/exported"})).read_only is False


async def test_bash_decisions_follow_the_callers_cdpath(
    make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    (make_ctx().cwd / "security").mkdir()
    monkeypatch.delenv("CDPATH", raising=False)
    line = "cd security && ls"
    first, second = make_ctx(), make_ctx()
    first.config.caller_env = Caller({"CDPATH": "/etc"})
    second.config.caller_env = Caller({"PATH": os.defpath})
    # CDPATH may take `cd security` to /etc/security: the first caller is asked.
    assert (await decide_on(first, "Bash", command=line)).behavior == "ask"
    assert (await decide_on(second, "Bash", command=line)).behavior == "allow"
    monkeypatch.setenv("CDPATH", "/etc")
    assert (await decide_on(second, "Bash", command=line)).behavior == "allow"


def test_the_saved_rule_reads_the_callers_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("build_dir", "/daemon-starter")
    rule = suggest_bash_rule("build_dir=out; make", Caller({"PATH": "/bin"}))
    assert rule == "Bash(make:*)"
    monkeypatch.delenv("build_dir")
    assert suggest_bash_rule("build_dir=out; make", Caller({"build_dir": "x"})) != rule
