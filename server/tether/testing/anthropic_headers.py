"""What the fake Messages API checks in a request's headers, before its body, in the real
API's order and words.

* Credentials: ``x-api-key`` or ``Authorization: Bearer`` must be there (401
  ``authentication_error``: ``x-api-key header is required``); with a key list set, the key
  must be in it (``invalid x-api-key``). Evidence: the API reference's authentication
  section (https://docs.anthropic.com/en/api/overview, both headers accepted) and the
  wording in captured answers quoted by client projects (``"authentication_error",
  "message": "x-api-key header is required"`` / ``"invalid x-api-key"``).
* ``anthropic-version`` must be there (400 ``invalid_request_error``: ``anthropic-version:
  header is required``); the SDK always sends it (``anthropic._constants
  .ANTHROPIC_API_VERSION``), and so does every real client. It must be one of the versions
  the versioning page lists (https://docs.anthropic.com/en/api/versioning: ``2023-06-01``
  and ``2023-01-01``) or the installed SDK's own (``ANTHROPIC_API_VERSION``, ``2026-10-21``,
  which Claude Code's binary in the Agent SDK wheel also sends), else 400
  ``anthropic-version: "2023-10-01" is not a valid version``
  (captured answers: directus-labs/extensions#285; two header lines read as one value,
  ``"2023-06-01, 2023-06-01"``, decolua/9router#2357).
* ``anthropic-beta``: each name must be one the API knows, else 400 ``Unexpected value(s)
  `a`, `b` for the `anthropic-beta` header. Please consult our documentation at
  docs.anthropic.com or try again without the header.`` (the wording of captured answers,
  e.g. anthropics/claude-code#53855, QuantumNous/new-api#2975). Known names: the SDK's
  ``AnthropicBetaParam`` literals (the installed SDK's own list) and the header names
  Claude Code 2.1.337 sends (its binary, bundled in the Agent SDK wheel: the ``A(name,
  header)`` table before ``Object.freeze([...])`` of its betas, and ``oauth-2025-04-20``).
"""

from __future__ import annotations

import json
from functools import cache
from typing import get_args

from tether.providers.anthropic_transport import API_VERSION
from tether.testing.anthropic_wire import ApiError

API_VERSIONS = frozenset({"2023-06-01", "2023-01-01", API_VERSION})
"""The ``anthropic-version`` values the API takes: its versioning page's, and the SDK's
(``anthropic_transport.API_VERSION``, checked against the SDK by a test; not imported from
the SDK here, whose import costs seconds)."""


CLAUDE_CODE_BETAS = frozenset(
    {
        "advanced-tool-use-2025-11-20", "advisor-tool-2026-03-01", "afk-mode-2026-01-31",
        "auto-mode-classifier-2026-07-16", "cache-diagnosis-2026-04-07",
        "cache-keepalive-2026-09-03", "ccr-byoc-2025-07-29", "claude-code-20250219",
        "claude-code-side-query-2026-09-29", "context-1m-2025-08-07",
        "context-hint-2026-04-09", "context-management-2025-06-27",
        "dangerous-tool-use-2026-09-03", "dangerous-tool-use-2026-10-15",
        "dangerous-tool-use-classifier-tool-calls-2026-11-23", "effort-2025-11-24",
        "environments-2025-11-01", "evaluate-safeguards-2026-11-21-grffcm",
        "extended-cache-ttl-2025-04-11", "fallback-credit-2026-06-01", "fast-mode-2026-02-01",
        "files-api-2025-04-14", "inline-tools-2026-09-15", "interleaved-thinking-2025-05-14",
        "mcp-servers-2025-12-04", "message-threads-2026-08-12",
        "mid-conversation-system-2026-04-07", "mid-conversation-system-clear-at-2026-08-21",
        "mid-conversation-tool-changes-2026-07-01", "oauth-2025-04-20",
        "per-turn-control-2026-07-01", "program-use-case-ids-2026-09-17",
        "prompt-caching-evict-2026-05-12", "prompt-caching-scope-2026-01-05",
        "redact-thinking-2026-02-12", "resumption-2026-10-08",
        "server-side-fallback-2026-06-01", "server-side-fallback-2026-07-01",
        "structured-outputs-2025-12-15", "subagent-review-2026-11-17",
        "task-budgets-2026-03-13", "thinking-binding-controls-2026-08-01",
        "thinking-display-updates-2026-08-18", "thinking-resumption-2026-07-17",
        "thinking-token-count-2026-05-13", "timing-2026-09-09", "tool-provenance-2026-10-26",
        "tool-search-tool-2025-10-19", "web-search-2025-03-05",
        "web-search-results-only-2026-11-15",
    }
)  # fmt: skip
"""The ``anthropic-beta`` names Claude Code 2.1.337 sends (a captured client's)."""


@cache
def known_betas() -> frozenset[str]:
    """Every beta name the fake accepts: the SDK's literals and Claude Code's."""
    from anthropic.types.anthropic_beta_param import AnthropicBetaParam

    literals: set[str] = set()
    for arg in get_args(AnthropicBetaParam):
        literals.update(a for a in get_args(arg) if isinstance(a, str))
    return frozenset(literals) | CLAUDE_CODE_BETAS


def betas_of(headers: dict[str, str]) -> frozenset[str]:
    return frozenset(b.strip() for b in headers.get("anthropic-beta", "").split(",")) - {""}


def check_headers(headers: dict[str, str], api_keys: set[str] | None) -> ApiError | None:
    """The first header rule ``headers`` (names lower-cased) break, or None."""
    bearer = headers.get("authorization", "")
    key = headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else "")
    if not key:
        return ApiError(401, "authentication_error", "x-api-key header is required")
    if api_keys is not None and key not in api_keys:
        return ApiError(401, "authentication_error", "invalid x-api-key")
    version = headers.get("anthropic-version")
    if not version:
        return ApiError(400, "invalid_request_error", "anthropic-version: header is required")
    if version not in API_VERSIONS:
        message = f"anthropic-version: {json.dumps(version)} is not a valid version"
        return ApiError(400, "invalid_request_error", message)
    betas = betas_of(headers)
    unknown = sorted(betas - known_betas()) if betas else []
    if unknown:
        names = ", ".join(f"`{b}`" for b in unknown)
        return ApiError(
            400,
            "invalid_request_error",
            f"Unexpected value(s) {names} for the `anthropic-beta` header. Please consult our "
            "documentation at docs.anthropic.com or try again without the header.",
        )
    return None
