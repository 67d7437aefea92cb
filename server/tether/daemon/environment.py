"""The part of a client's environment its sessions run with. The daemon's own environment
is the first client's, by accident; sessions use the variables of the client that opened
them, so one terminal's key or proxy never reaches another's session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PREFIXES = ("ANTHROPIC_", "OPENAI_", "TETHER_", "CLAUDE_", "AWS_", "GOOGLE_", "OLLAMA_")
NAMES = frozenset(
    {
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "PATH",
        "VIRTUAL_ENV",
        "LANG",
        "LC_ALL",
        "NO_COLOR",
        "TERM",
    }
)


def session_variables(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in NAMES or k.startswith(PREFIXES)}


def client_environment(cwd: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The params of ``tether/clientEnvironment``."""
    return {"cwd": cwd, "env": session_variables(env)}
