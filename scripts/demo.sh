#!/usr/bin/env bash
# Install Tether in .venv and run the offline demo (no API key, no network).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
exec .venv/bin/tether demo "$@"
