"""The Bash analysis reads the variables of the caller whose shell runs the command, never
this process's: in the warm daemon these are whoever started it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tether.core.environ import Caller
from tether.permissions.bash_suggest import suggest_bash_rule
from tether.permissions.shell import parse_command
from tether.permissions.shell.effects import effects
from tether.sandbox import BwrapSandbox
from tether.sandbox.doors import DoorFinder
from tether.sandbox.protect import Discovery, plan

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


def _repo_with_hooks(root: Path, home: Path) -> tuple[Path, Path]:
    """A repository and a git configuration outside it naming ``myhooks`` inside it."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    hooks = root / "myhooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\n")
    home.mkdir(exist_ok=True)
    config = home / "caller-gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    return config, hooks / "pre-commit"


CALLER_GIT_CONFIGS = [
    pytest.param(lambda cfg, home: {"GIT_CONFIG_GLOBAL": str(cfg)}, id="GIT_CONFIG_GLOBAL"),
    pytest.param(lambda cfg, home: {"GIT_CONFIG_SYSTEM": str(cfg)}, id="GIT_CONFIG_SYSTEM"),
    pytest.param(
        lambda cfg, home: {"HOME": str(home), "_link": str(home / ".gitconfig")}, id="HOME"
    ),
    pytest.param(
        lambda cfg, home: {"XDG_CONFIG_HOME": str(home), "_link": str(home / "git" / "config")},
        id="XDG_CONFIG_HOME",
    ),
    pytest.param(
        lambda cfg, home: {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.hooksPath",
            "GIT_CONFIG_VALUE_0": str(cfg.parent.parent / "ws" / "myhooks"),
        },
        id="GIT_CONFIG_COUNT",
    ),
]


@pytest.mark.parametrize("variables", CALLER_GIT_CONFIGS)
async def test_the_hooks_the_callers_git_runs_are_doors(
    make_ctx: MakeCtx,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variables: Callable[[Path, Path], dict[str, str]],
) -> None:
    ctx = make_ctx()
    config, hook = _repo_with_hooks(ctx.cwd, tmp_path / "callerhome")
    values = variables(config, tmp_path / "callerhome")
    link = values.pop("_link", None)
    if link is not None:
        Path(link).parent.mkdir(parents=True, exist_ok=True)
        Path(link).symlink_to(config)
    # This process (the daemon) knows nothing of that configuration.
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "XDG_CONFIG_HOME", "GIT_CONFIG_COUNT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "daemonhome"))
    sandbox = ctx.config.shell_sandbox
    assert isinstance(sandbox, BwrapSandbox)
    caller = Caller({"PATH": os.defpath, "HOME": str(tmp_path / "elsewhere"), **values})
    assert sandbox.door(hook, caller) is not None
    assert sandbox.door(hook, Caller({"PATH": os.defpath})) is None
    found = [Discovery().found(ctx.cwd)]
    planned = plan([ctx.cwd], found, git_writable=False, finder=DoorFinder(), env=caller)
    assert any(item.path == hook.parent for item in planned.items)
    ctx.config.caller_env = caller
    line = "echo 'touch /tmp/planted' >> myhooks/pre-commit"
    decision = await decide_on(ctx, "Bash", command=line)
    assert decision.behavior == "ask" and "myhooks" in (decision.reason or "")
