"""The README's Install section, followed literally on a fresh machine: no virtualenv, a
home of its own, only ``uv`` and the system on ``PATH``. Its commands run one by one in a
copy of the repository's files (what a clone gives), as a user types them: ``uv tool
install .``, then ``tether --version``, ``tether demo`` and ``tether doctor``.

Dependencies come from the package registry as they do for a user (uv's cache, reused
here, makes it quick); nothing else is reached.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tether import __version__

REPO = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).parent / "uv"
INSTALL_TIMEOUT_S = 300


def install_commands() -> list[str]:
    """The first ``sh`` block of the README's ``## Install`` section, line by line."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Install\n(.*?)(?=^## )", readme, re.M | re.S)
    assert section is not None, "README.md has no '## Install' section"
    block = re.search(r"```sh\n(.*?)```", section.group(1), re.S)
    assert block is not None, "the Install section has no sh block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_install_block_is_what_this_test_runs() -> None:
    commands = install_commands()
    # No address to clone from is claimed: the block starts in a checkout, however made.
    assert commands[0].split("#")[0].strip() == "cd tether"
    assert not any("<" in c or "://" in c for c in commands)
    assert [c.split("#")[0].strip() for c in commands[1:]] == [
        "uv tool install .",
        "tether --version",
        "tether demo",
        "tether doctor",
    ]


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The repository's files as a clone has them (tracked and new, nothing ignored)."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    dest = tmp_path / "tether"
    for name in filter(None, (f.decode() for f in files)):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


def fresh_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment on a fresh machine: their own home, uv's tool folders in it,
    ``PATH`` with uv and the system only (no virtualenv, no ``tether``)."""
    assert UV.exists(), "uv is in the test extra: pip install -e '.[test]'"
    cache = subprocess.run([str(UV), "cache", "dir"], capture_output=True, text=True, check=True)
    home = tmp_path / "home"
    uv_bin = tmp_path / "uv-bin"
    uv_bin.mkdir()
    (uv_bin / "uv").symlink_to(UV)
    keep = ("LANG", "LC_ALL", "TERM", "SSL_CERT_FILE", "SSL_CERT_DIR", "PIP_", "UV_INDEX")
    env = {k: v for k, v in os.environ.items() if k.startswith(keep)}
    tools_bin = home / ".local" / "bin"
    env.update(
        HOME=str(home),
        PATH=f"{tools_bin}:{uv_bin}:/usr/local/bin:/usr/bin:/bin",
        UV_TOOL_DIR=str(home / ".local" / "share" / "uv" / "tools"),
        UV_TOOL_BIN_DIR=str(tools_bin),
        UV_CACHE_DIR=cache.stdout.strip(),  # the registry's packages, already fetched once
        UV_PYTHON_DOWNLOADS="never",  # the system's Python 3.11+, as the README requires
        UV_NO_PROGRESS="1",
        XDG_RUNTIME_DIR=str(tmp_path / "run"),
        TMPDIR=str(tmp_path / "tmp"),
    )
    for path in (home, tmp_path / "run", tmp_path / "tmp"):
        path.mkdir(mode=0o700, exist_ok=True)
    return env


def test_following_the_readme_install_section(clone: Path, tmp_path: Path) -> None:
    env = fresh_env(tmp_path)
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    try:
        for line in install_commands()[1:]:  # the first one enters the checkout, made above
            command = shlex.split(line, comments=True)
            done[command[-1] if command[0] == "tether" else "install"] = subprocess.run(
                command,
                cwd=clone,
                env=env,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
    finally:
        with contextlib.suppress(OSError):  # no daemon to stop if the install failed
            subprocess.run(
                ["tether", "daemon", "stop"], cwd=clone, env=env, capture_output=True, timeout=60
            )
    install = done["install"]
    assert install.returncode == 0, install.stderr
    tether = Path(env["UV_TOOL_BIN_DIR"]) / "tether"
    assert tether.exists(), install.stderr
    # The tool runs from its own environment, not from this checkout or its venv.
    assert os.path.realpath(tether).startswith(env["UV_TOOL_DIR"])

    assert done["--version"].returncode == 0
    assert done["--version"].stdout.strip() == f"tether {__version__}"

    demo = done["demo"]
    assert demo.returncode == 0, demo.stderr
    assert "[demo] done (exit 0)" in demo.stderr
    edited = re.search(r"The edited workspace is at (\S+)", demo.stderr)
    assert edited is not None, demo.stderr
    ops = Path(edited.group(1)) / "calc" / "ops.py"
    assert "return sum(values) / len(values)\n" in ops.read_text()

    doctor = done["doctor"]
    # No model yet (as the README says): that is the one problem, and it says what to do.
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    lines = doctor.stdout.splitlines()
    assert lines[0].startswith(f"tether {__version__} · Python ")
    assert env["UV_TOOL_DIR"] in lines[0]  # the installed copy answered
    assert f"✓ install    `tether` on PATH: {tether}" in lines
    assert any(line.startswith("✗ model      No model is configured") for line in lines)
    assert lines[-1].startswith("1 problem(s), ")
