"""A project's virtual environment runs nothing planted by a sandboxed command when the
user activates it or starts Python in it (``sandbox/venv.py``), and installing into it
keeps working.

Each attack is run once without the sandbox, where the host's action (sourcing
``bin/activate``, starting ``.venv/bin/python``) must touch the canary; sandboxed, it must
not, and the result names what was refused.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import MakeHarness, needs_bwrap, text_of
from .test_no_door import write

pytestmark = needs_bwrap

SITE = f".venv/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
TOUCH = 'open("{canary}", "w").close()'
HOST_PYTHON = ".venv/bin/python -c pass"
HOST_ACTIVATE = ". .venv/bin/activate && python -c pass"


def base_python() -> str:
    """The interpreter a venv is made from (not this test run's own venv)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def make_venv(ws: Path) -> None:
    subprocess.run(
        [base_python(), "-m", "venv", "--without-pip", "--system-site-packages", str(ws / ".venv")],
        check=True,
        capture_output=True,
    )
    write(ws / SITE / "_hack.py", "ENABLED = True\n")
    write(ws / SITE / "hack.pth", "import _hack\n")
    (ws / "env" / "conda-meta").mkdir(parents=True)  # a conda environment, as conda lays it out
    write(ws / "env" / "conda-meta" / "history", "")


VENV_ATTACKS = [
    pytest.param(
        "echo 'touch {canary}' >> .venv/bin/activate", HOST_ACTIVATE, id="activate-appended"
    ),
    pytest.param(
        f"echo '{TOUCH}' > x.py && mv x.py {SITE}/sitecustomize.py",
        HOST_PYTHON,
        id="sitecustomize-renamed-in",
    ),
    pytest.param(
        f"mkdir -p {SITE}/sitecustomize && echo '{TOUCH}' > {SITE}/sitecustomize/__init__.py",
        HOST_PYTHON,
        id="sitecustomize-package",
    ),
    pytest.param(
        f"mkdir -p tools && echo '{TOUCH}' > tools/sitecustomize.py"
        f' && echo "$PWD/tools" > {SITE}/tools.pth',
        HOST_PYTHON,
        id="sitecustomize-through-a-pth-path-line",
    ),
    pytest.param(f"echo '{TOUCH}' >> {SITE}/_hack.py", HOST_PYTHON, id="pth-imported-module"),
    pytest.param(
        f"echo 'import os; {TOUCH}' >> {SITE}/hack.pth", HOST_PYTHON, id="existing-pth-appended"
    ),
    pytest.param(
        "printf '#!/bin/sh\\ntouch {canary}\\n' > py && chmod +x py && ln -sf \"$PWD/py\" .venv/bin/python",
        HOST_PYTHON,
        id="python-link-replaced",
    ),
    pytest.param(
        "mkdir -p env/etc/conda/activate.d && echo 'touch {canary}'"
        " > env/etc/conda/activate.d/x.sh",
        ". env/etc/conda/activate.d/*.sh",
        id="conda-activate-d",
    ),
    pytest.param(
        "mkdir -p fake && printf 'home = %s/fake\\ninclude-system-site-packages = false\\n' \"$PWD\""
        " > .venv/pyvenv.cfg",
        None,
        id="pyvenv-cfg-home",
    ),
]


@pytest.mark.parametrize(("command", "host"), VENV_ATTACKS)
async def test_the_host_does_not_run_what_a_command_planted_in_a_venv(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path, command: str, host: str | None
) -> None:
    canary = tmp_path / "canary"
    line = command.format(canary=str(canary))
    host_line = host.format(canary=str(canary)) if host else None
    make_venv(workspace)
    cfg = (workspace / ".venv" / "pyvenv.cfg").read_text()

    control = tmp_path / "control" / workspace.name
    shutil.copytree(workspace, control, symlinks=True)
    subprocess.run(["bash", "-c", line], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
    if host_line is not None:
        subprocess.run(["bash", "-c", host_line], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
        assert canary.exists(), "the attack does not fire even unsandboxed"
        canary.unlink()
    else:
        assert (control / ".venv" / "pyvenv.cfg").read_text() != cfg

    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=line))
    if host_line is not None:
        await asyncio.to_thread(
            subprocess.run, ["bash", "-c", host_line], cwd=workspace, capture_output=True
        )
    assert not canary.exists(), f"the host ran what was planted:\n{out}"
    assert (workspace / ".venv" / "pyvenv.cfg").read_text() == cfg, out
    assert "refused" in out or "Read-only" in out, out


def wheel(path: Path, files: dict[str, str]) -> None:
    """A wheel as pip installs it (a zip with its metadata): no build needed offline."""
    name, version = path.name.split("-")[:2]
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as z:
        for name, text in {**files, f"{info}/RECORD": record}.items():
            z.writestr(name, text)


async def test_pip_install_and_editable_install_keep_working(
    make_harness: MakeHarness, workspace: Path
) -> None:
    """A wheel and an editable one (PEP 660: a ``__editable__`` ``.pth`` whose import line
    loads a finder, as setuptools writes) install into the protected environment; the
    new ``.pth`` runs (not covered: documented)."""
    make_venv(workspace)
    wheel(workspace / "demo-0.1-py3-none-any.whl", {"demo/__init__.py": "X = 1\n"})
    wheel(
        workspace / "proj-0.1-py3-none-any.whl",
        {
            "__editable__.proj-0.1.pth": "import __editable___proj_finder; __editable___proj_finder.install()\n",
            "__editable___proj_finder.py": "def install():\n    pass\n",
        },
    )
    h = make_harness(mode="bypassPermissions")
    pip = ".venv/bin/python -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check"
    out = text_of(
        await h.call(
            "Bash",
            command=f"{pip} ./demo-0.1-py3-none-any.whl ./proj-0.1-py3-none-any.whl"
            " && .venv/bin/python -c 'import demo, __editable___proj_finder; print(demo.X)'",
        )
    )
    assert out.strip().endswith("1") and "Exit" not in out, out
    assert (workspace / SITE / "__editable__.proj-0.1.pth").is_file(), out
