"""What starts Tether: ``tether`` on PATH (editors start it by name), ripgrep for Grep, the
VS Code extension, Neovim and the plugin, looked for where their package managers put them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether.cli.doctor.report import Finding

VSCODE_EXTENSION = "tether.tether"
"""``publisher.name`` of clients/vscode/package.json."""
NVIM_MIN = (0, 11)
_NVIM_VERSION = re.compile(r"NVIM v(\d+)\.(\d+)(?:\.(\d+))?")
_EXTENSION_DIRS = (
    ".vscode/extensions",
    ".vscode-insiders/extensions",
    ".vscode-oss/extensions",
    ".vscode-server/extensions",
    ".local/share/code-server/extensions",
)
_PLUGIN_GLOBS = (
    "lazy/*/lua/tether/health.lua",
    "lazy/*/clients/neovim/lua/tether/health.lua",
    "site/pack/*/*/*/lua/tether/health.lua",
    "site/pack/*/*/*/clients/neovim/lua/tether/health.lua",
)
"""lazy.nvim, and packer / vim.pack / plain packages under ``site/pack``."""


def check_on_path(env: Mapping[str, str], running: str = sys.argv[0]) -> Finding:
    found = shutil.which("tether", path=env.get("PATH"))
    here = Path(running).resolve() if running else None
    if found is None:
        where = f" (this one is {here.parent})" if here is not None else ""
        return Finding(
            "install",
            "warn",
            f"`tether` is not on PATH{where}: editors start it by that name",
            fix=_path_fix(here),
        )
    if here is not None and here.name == "tether" and Path(found).resolve() != here:
        summary = f"`tether` on PATH is {found}, another install than this one ({here})"
        return Finding("install", "warn", summary, fix="remove one of them, or reorder PATH")
    return Finding("install", "ok", f"`tether` on PATH: {found}")


def _path_fix(here: Path | None) -> str:
    """How to put this install on PATH: a tool install's own command, or for a virtualenv of
    one's own (a checkout's ``.venv``), a link into a folder that is on PATH."""
    tool = here is not None and ("/uv/tools/" in str(here) or "/pipx/venvs/" in str(here))
    if here is None or tool or not (here.parent.parent / "pyvenv.cfg").is_file():
        return (
            "add its directory to PATH: `uv tool update-shell` or `pipx ensurepath`, then "
            "open a new terminal"
        )
    return (
        f"it is in the virtualenv {here.parent.parent}: link it into a folder on PATH "
        f"(`ln -s {here} ~/.local/bin/tether`), or install it as a tool (`uv tool install .`)"
    )


def check_ripgrep(env: Mapping[str, str]) -> Finding:
    found = shutil.which("rg", path=env.get("PATH"))
    if found:
        return Finding("install", "ok", f"ripgrep: {found}")
    return Finding(
        "install",
        "info",
        "ripgrep (rg) not found: Grep uses its own slower search (same answers)",
        fix="install ripgrep (`sudo apt install ripgrep`) for speed on big trees",
    )


def check_vscode(home: Path, env: Mapping[str, str]) -> Finding:
    roots = [Path(env["VSCODE_EXTENSIONS"])] if env.get("VSCODE_EXTENSIONS") else []
    roots += [home / d for d in _EXTENSION_DIRS]
    found = sorted(p for r in roots if r.is_dir() for p in r.glob(f"{VSCODE_EXTENSION}-*"))
    if found:
        return Finding("clients", "ok", "VS Code extension installed", tuple(map(str, found)))
    return Finding(
        "clients",
        "info",
        "VS Code extension: not installed",
        fix="see clients/vscode/README.md (getting the extension)",
    )


def check_neovim(data_home: Path, env: Mapping[str, str]) -> Finding:
    nvim = shutil.which("nvim", path=env.get("PATH"))
    plugin = _plugin_dirs(data_home / "nvim")
    where = tuple(f"plugin: {p}" for p in plugin)
    if nvim is None:
        return Finding("clients", "info", "Neovim: not on PATH", where)
    version = _nvim_version(nvim)
    label = f"Neovim {'.'.join(map(str, version)) if version else '(version unknown)'}"
    if version is not None and version[:2] < NVIM_MIN:
        return Finding(
            "clients", "warn", f"{label}: the plugin needs 0.11 or later", (nvim, *where)
        )
    if not plugin:
        summary = f"{label}; the plugin was not found where lazy.nvim, packer or vim.pack put it"
        details = (nvim, "a `dir =` spec or another place is not looked at")
        return Finding("clients", "info", summary, details, "see clients/neovim/README.md")
    return Finding("clients", "ok", f"{label} with the plugin", (nvim, *where))


def _plugin_dirs(nvim_data: Path) -> list[Path]:
    found: set[Path] = set()
    for pattern in _PLUGIN_GLOBS:
        found.update(p.parent.parent.parent for p in nvim_data.glob(pattern))
    return sorted(found)


def _nvim_version(nvim: str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run(
            [nvim, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _NVIM_VERSION.search(done.stdout)
    return tuple(int(g) for g in match.groups() if g is not None) if match else None


def data_home(env: Mapping[str, str], home: Path) -> Path:
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")


def home_of(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def all_client_checks(env: Mapping[str, str]) -> Sequence[Finding]:
    home = home_of(env)
    return [check_vscode(home, env), check_neovim(data_home(env, home), env)]
