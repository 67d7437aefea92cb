#!/usr/bin/env bash
# CI hook, run by .ci/run before pytest: installs the TypeScript Agent SDK that
# tests/e2e/test_agent_sdk_conformance.py drives Tether with (tests/sdk/conformance.mjs).
#   - exactly the versions package-lock.json names (npm ci), from npm's registry;
#   - --omit=optional: the SDK's optional per-platform packages carry Claude Code's native
#     CLI (about 400 MB); the tests name the CLI with pathToClaudeCodeExecutable (Tether, or
#     the one the claude-agent-sdk wheel bundles), so the SDK never needs its own;
#   - skipped when node_modules already holds the locked SDK (a cached checkout).
# Needs Node 18.14+ (the package's engines field) and npm on PATH.
set -euo pipefail
cd "$(dirname "$0")"

want="$(node -p 'require("./package-lock.json").packages["node_modules/@anthropic-ai/claude-agent-sdk"].version')"
have="$(node -p 'try { require("./node_modules/@anthropic-ai/claude-agent-sdk/package.json").version } catch { "" }')"
if [ "$have" != "$want" ]; then
  npm ci --omit=optional --no-audit --no-fund --loglevel=error
fi
echo "node $(node --version), @anthropic-ai/claude-agent-sdk $(node -p 'require("./node_modules/@anthropic-ai/claude-agent-sdk/package.json").version')"
