"""The daemon as users install it: a wheel built from the repository (``python -m build``),
installed with ``uv tool install`` into a fresh tool environment, runs ``tether demo``.

The wheel must carry every bundled prompt and example (package data), and the project's
metadata must build without deprecation warnings. Dependencies come from the package
registry, as they do for a user.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
INSTALL_TIMEOUT_S = 600


def run(
    cmd: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, timeout=timeout, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # From a copy of the tracked files: a build must not depend on (or leave) local state.
    src = tmp_path_factory.mktemp("src")
    files = run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO
    ).stdout.split("\0")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((REPO / name).read_bytes())
    proc = run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)],
        timeout=INSTALL_TIMEOUT_S,
    )
    assert "SetuptoolsDeprecationWarning" not in proc.stdout + proc.stderr, proc.stderr
    (built,) = out.glob("tether-*.whl")
    return built


def test_wheel_carries_every_bundled_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = run(["git", "ls-files", "server/tether"], cwd=REPO).stdout.split()
    data = [f for f in tracked if not f.endswith(".py")]
    assert any("/prompts/" in f for f in data) and any("/examples/" in f for f in data)
    missing = [f for f in tracked if f.removeprefix("server/") not in names]
    assert missing == []
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(wheel).read(meta).decode()
    assert "License-Expression: MIT" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_uv_tool_install_runs_the_demo(wheel: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(
        UV_TOOL_DIR=str(tmp_path / "tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
        UV_PYTHON=sys.executable,
        UV_NO_PROGRESS="1",
        TETHER_DATA_DIR=str(tmp_path / "data"),
    )
    uv = BIN / "uv"
    run([str(uv), "tool", "install", str(wheel)], env=env, timeout=INSTALL_TIMEOUT_S)
    tether = tmp_path / "bin" / "tether"
    assert tether.exists(), "uv tool install did not put `tether` on its bin dir"
    # The tool runs from its own environment, not from this checkout.
    where = run(
        [
            str(tmp_path / "tools" / "tether" / "bin" / "python"),
            "-c",
            "import tether, sys; sys.stdout.write(tether.__file__)",
        ],
        env=env,
    ).stdout
    assert where.startswith(str(tmp_path / "tools")), where
    demo = run([str(tether), "demo", "--dir", str(tmp_path / "demo")], env=env, timeout=120)
    ops = (tmp_path / "demo" / "calc-demo" / "calc" / "ops.py").read_text()
    assert "return sum(values) / len(values)\n" in ops, demo.stderr
    assert "done (exit 0)" in demo.stderr
