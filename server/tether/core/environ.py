"""Whose environment a session's processes and HTTP clients get.

In-process that is this process's. The warm daemon serves several callers, and its own
environment is its first caller's, by accident: a session it runs for a caller gets the
daemon's environment with everything that belongs to a caller taken out (keys, base URLs,
proxies, CA files, ``PATH``, ``TETHER_*``...) and that caller's put in, so one terminal's
key or proxy never reaches another's session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

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
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "PATH",
        "VIRTUAL_ENV",
        "LANG",
        "LC_ALL",
        "NO_COLOR",
        "TERM",
        "SHELL",
    }
)

MODEL_CREDENTIALS = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "TETHER_API_KEY"}
)
"""Model keys: commands the agent runs (Bash) have no business with them."""


def is_session_variable(name: str) -> bool:
    return name in NAMES or name.startswith(PREFIXES)


def session_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The part of a client's environment its sessions run with."""
    return {k: v for k, v in env.items() if is_session_variable(k)}


def process_env(caller: Mapping[str, str] | None, *, credentials: bool) -> dict[str, str]:
    """The environment of a process started for a session. ``caller``: the variables of the
    warm daemon's client the session belongs to (None: in-process, this process's own).
    ``credentials``: whether model keys go along (hooks and MCP servers get them, as in
    Claude Code; Bash does not)."""
    if caller is None:
        env = dict(os.environ)
    else:
        env = {k: v for k, v in os.environ.items() if not is_session_variable(k)}
        env.update(caller)
    if not credentials:
        for name in MODEL_CREDENTIALS:
            env.pop(name, None)
    return env
