"""The real daemon's first "always" answer in a git repository: the rule is saved in
``.tether/settings.local.json`` and ``git status`` stays clean (the daemon adds
``.tether/*.local.*`` to ``.git/info/exclude``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import running_daemon

BASH = {"type": "tool_use", "name": "Bash", "input": {"command": "echo permitted > out.txt"}}


def git(cwd: Path, *args: str) -> str:
    exe = shutil.which("git")
    if exe is None:
        pytest.fail("git is not installed")
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


async def test_first_always_answer_leaves_git_status_clean(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    git(workspace, "init", "-q")
    (workspace / ".gitignore").write_text("out.txt\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "start")
    assert git(workspace, "status", "--porcelain", "--untracked-files=all") == ""

    api = fake_api([[BASH], [{"type": "text", "text": "ok"}]])
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.answers.append("allow_always")
        session = await editor.new_session()
        await editor.prompt(session, "go")
    local = workspace / ".tether" / "settings.local.json"
    assert json.loads(local.read_text())["permissions"]["allow"] == [
        "Bash(echo permitted > out.txt)"
    ]
    assert git(workspace, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(workspace, "check-ignore", ".tether/settings.local.json").strip() == (
        ".tether/settings.local.json"
    )
