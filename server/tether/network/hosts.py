"""Host patterns and what a decision about a host looks like.

A pattern is a host name or address, ``*.example.org`` (subdomains only, as Claude Code's
``WebFetch(domain:…)``), or either followed by ``:port`` (``*`` for any port). Without a
port it covers every port of the host. Names are compared lower-cased, without a trailing
dot; IPv6 addresses are written bare or in brackets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str
    """For a refusal, in a few words (``user denied``, ``denied by Network(domain:x)``)."""


Decide = Callable[[str, int], Awaitable[Verdict]]
"""Whether the sandboxed command may reach ``host:port`` (the connection waits for it)."""


def normal_host(host: str) -> str:
    """Lower case, no brackets, no trailing dot."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.rstrip(".")


def split_pattern(pattern: str) -> tuple[str, str | None]:
    """``(host pattern, port or "*" or None)``."""
    text = pattern.strip()
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[1:end], text[end + 1 :]
        return normal_host(host), rest[1:] if rest.startswith(":") else None
    if text.count(":") == 1:
        host, port = text.split(":")
        return normal_host(host), port
    return normal_host(text), None


def host_matches(pattern: str, host: str, port: int) -> bool:
    want, want_port = split_pattern(pattern)
    if want_port not in (None, "*", str(port)):
        return False
    host = normal_host(host)
    if want.startswith("*."):
        return host.endswith(want[1:]) and host != want[2:]
    return host == want


def first_match(patterns: Iterable[str], host: str, port: int) -> str | None:
    return next((p for p in patterns if host_matches(p, host, port)), None)


def valid_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a host pattern, or None."""
    host, port = split_pattern(pattern)
    if not host or any(c in host for c in "/@ ") or "*" in host.removeprefix("*."):
        return f"{pattern!r} is not a host (write example.org, *.example.org or host:port)"
    if port is not None and port != "*" and not (port.isdigit() and 0 < int(port) < 65536):
        return f"{pattern!r} has no valid port (1-65535 or *)"
    return None
