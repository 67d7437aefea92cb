"""A project's Python virtual environments: what runs when the user activates one or starts
any Python in it.

A sandboxed command may install into a virtual environment (``pip install``, ``-e .``,
``uv sync`` write ``site-packages`` and ``bin/``), so the environment is not protected as a
whole. What runs without the user choosing a program is:

- the activation scripts (``bin/activate``, ``activate.fish``…), which the user's shell
  sources, and ``pyvenv.cfg``, whose ``home`` decides which interpreter and standard
  library every start loads; the ``bin/python*`` links. ``python -m venv``, virtualenv and
  uv write them when they create the environment; installing never touches them;
- the ``.pth`` files in ``site-packages`` as they are, and the modules their ``import``
  lines load (``_distutils_hack``, ``_virtualenv``, an editable install's finder): the
  ``site`` module executes those lines on every start. Installing or removing the package
  that owns one of them is refused in the sandbox (setuptools, virtualenv, an editable
  install of the project);
- ``sitecustomize``/``usercustomize``, protected by name everywhere
  (``controlplane.PYTHON_STARTUP``).

Not covered: a new ``.pth`` file, whose ``import`` lines run on every start (editable
installs write such lines, and nothing tells theirs from another's by content); the
modules and console scripts the user runs by name (``bin/pytest``, a package's code); an
environment the command itself creates.

Environments are recognised by their ``pyvenv.cfg`` (or, for a conda environment, whose
activation runs the scripts in ``etc/conda/activate.d``, by ``conda-meta``), at the top of
a root and one and two folders down.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from tether.sandbox.doors import Door

ACTIVATE = (
    *("activate", "activate.csh", "activate.fish", "activate.nu", "activate.ps1"),
    *("Activate.ps1", "activate.bat", "activate.xsh", "activate_this.py"),
)
SEARCH_DEPTH = 2
SKIPPED = frozenset({"node_modules", ".git", "__pycache__"})
_PTH_IMPORT = re.compile(
    r"(?:^|;)\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import)"
    r"|__import__\(\s*['\"]([\w.]+)['\"]"
)
MAX_PTH_BYTES = 1 << 16


def find_venvs(roots: Sequence[Path]) -> list[Path]:
    """Folders holding a ``pyvenv.cfg`` or ``conda-meta`` at a root and up to
    ``SEARCH_DEPTH`` below it."""
    out: list[Path] = []
    stack = [(root, 0) for root in roots]
    while stack:
        here, depth = stack.pop()
        if (here / "pyvenv.cfg").is_file() or (here / "conda-meta").is_dir():
            out.append(here)
            continue
        if depth >= SEARCH_DEPTH:
            continue
        try:
            with os.scandir(here) as it:
                children = [e for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        stack += [(Path(e.path), depth + 1) for e in children if e.name not in SKIPPED]
    return out


def venv_doors(venv: Path) -> list[Door]:
    activate = f"the user's shell runs it when the virtual environment is activated ({venv})"
    start = f"every Python started in the virtual environment runs or reads it ({venv})"
    out = [Door(venv / "pyvenv.cfg", start)]
    # conda's activation runs every script in these (``conda activate ./env``).
    out += [Door(venv / "etc" / "conda" / d, activate) for d in ("activate.d", "deactivate.d")]
    for folder in ("bin", "Scripts"):
        out += [Door(venv / folder / name, activate) for name in ACTIVATE]
        try:
            with os.scandir(venv / folder) as it:
                names = [e.name for e in it if e.name.startswith("python")]
        except OSError:
            names = []
        out += [Door(venv / folder / name, start) for name in names]
    for site in [*venv.glob("lib*/python*/site-packages"), venv / "Lib" / "site-packages"]:
        out += _site_doors(site, start)
    return out


def _site_doors(site: Path, why: str) -> list[Door]:
    """The ``.pth`` files of a ``site-packages`` and the modules their lines import."""
    try:
        with os.scandir(site) as it:
            pths = [Path(e.path) for e in it if e.name.endswith(".pth") and e.is_file()]
    except OSError:
        return []
    out: list[Door] = []
    for pth in pths:
        out.append(Door(pth, f"{why}: the site module reads it"))
        try:
            with open(pth, "rb") as f:
                text = f.read(MAX_PTH_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if not line.startswith(("import ", "import\t")):
                continue  # only these lines execute (the site module)
            for match in _PTH_IMPORT.finditer(line):
                for group in match.groups():
                    for module in (group or "").split(","):
                        top = module.strip().split(".", 1)[0]
                        if top:
                            imported = f"{why}: {pth.name} imports it"
                            out += [Door(site / top, imported), Door(site / f"{top}.py", imported)]
    return out
