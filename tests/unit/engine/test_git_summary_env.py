"""The git the system prompt's summary runs sees the caller's environment, not this
process's: a caller of the warm daemon whose ``GIT_DIR`` names another repository gets that
repository's summary, as its own shell would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tether.engine.context import git_summary


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_git_runs_with_the_callers_environment(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for repo, branch in ((mine, "main-of-mine"), (theirs, "branch-of-theirs")):
        repo.mkdir()
        git(repo, "init", "-q", "-b", branch)
        git(
            repo,
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        )
    assert git_summary(mine).startswith("branch main-of-mine")
    caller = {"PATH": os.environ["PATH"], "GIT_DIR": str(theirs / ".git")}
    assert git_summary(mine, caller).startswith("branch branch-of-theirs")
