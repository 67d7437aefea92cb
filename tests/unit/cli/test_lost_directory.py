"""A working directory deleted under the shell gives one clear line, not a traceback, for
every command that works in it (print mode and ``run``, through the daemon or in-process,
``sessions``, ``doctor``, ``attach``): the check comes before any of them. One that names
another directory, or needs none, runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TETHER = str(Path(sys.executable).with_name("tether"))
SCRIPTED = ["--model", "scripted:/dev/null"]


def in_a_deleted_directory(tmp_path: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"'
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TETHER_DATA_DIR": str(tmp_path / "data"),
        "TETHER_RUNTIME_DIR": str(tmp_path / "run"),
    }
    return subprocess.run(
        ["sh", "-c", script, "sh", TETHER, *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["-p", "hi", "--no-daemon", *SCRIPTED],
        ["-p", "hi", *SCRIPTED],
        ["run", "hi", *SCRIPTED],
        ["sessions"],
        ["doctor"],
        ["attach", "0a1b2c"],
        ["doctor", "--cwd", "relative/to/nothing"],
    ],
    ids=["in-process", "daemon", "run", "sessions", "doctor", "attach", "relative-cwd"],
)
def test_a_deleted_directory_is_one_clear_line(tmp_path: Path, argv: list[str]) -> None:
    done = in_a_deleted_directory(tmp_path, argv)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "tether: the current directory cannot be read (No such file or directory): it was "
        "deleted or moved away. cd to an existing directory (or name one with --cwd) and run "
        "again."
    ]
    assert not (tmp_path / "run").exists() or not list((tmp_path / "run").rglob("*.sock"))


def test_a_command_that_names_its_directory_or_needs_none_runs(tmp_path: Path) -> None:
    listed = in_a_deleted_directory(tmp_path, ["sessions", "--all"])
    assert listed.returncode == 0 and listed.stdout == "No sessions found for anywhere.\n"
    elsewhere = in_a_deleted_directory(tmp_path, ["sessions", f"--cwd={tmp_path}"])
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert elsewhere.stdout == f"No sessions found for {tmp_path}.\n"
