"""A working directory deleted under the shell gives one clear line, not a traceback, in
print mode and ``run``, through the daemon or in-process (the check comes before either)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TETHER = str(Path(sys.executable).with_name("tether"))


@pytest.mark.parametrize(
    "argv",
    [["-p", "hi", "--no-daemon"], ["-p", "hi"], ["run", "hi"]],
    ids=["in-process", "daemon", "run"],
)
def test_a_deleted_directory_is_one_clear_line(tmp_path: Path, argv: list[str]) -> None:
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"'
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "TETHER_DATA_DIR": str(tmp_path / "data"),
        "TETHER_RUNTIME_DIR": str(tmp_path / "run"),
    }
    done = subprocess.run(
        ["sh", "-c", script, "sh", TETHER, *argv, "--model", "scripted:/dev/null"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "tether: the current directory cannot be read (No such file or directory): it was "
        "deleted or moved away. cd to an existing directory and run again."
    ]
    assert not (tmp_path / "run").exists() or not list((tmp_path / "run").rglob("*.sock"))
