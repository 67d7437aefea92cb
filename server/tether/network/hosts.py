"""Host patterns and what a decision about a host looks like.

A pattern is a host name or address, ``*.example.org`` (subdomains only, as Claude Code's
``WebFetch(domain:…)``), or either followed by ``:port`` (``*`` for any port). Without a
port it covers every port of the host. Names are compared lower-cased, without a trailing
dot; IPv6 addresses are written bare or in brackets.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

_LABEL = re.compile(r"[a-z0-9_][a-z0-9_-]{0,62}")
_NUMERIC = re.compile(r"[0-9a-fx.]+")


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str
    """For a refusal, in a few words (``user denied``, ``denied by Network(domain:x)``)."""


Decide = Callable[[str, int], Awaitable[Verdict]]
"""Whether the sandboxed command may reach ``host:port`` (the connection waits for it)."""


def normal_host(host: str) -> str:
    """Lower case, no brackets, no trailing dot; an address in its canonical form (every
    spelling the resolver takes as one: ``127.1``, ``0x7f000001``, ``::ffff:127.0.0.1``)."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = host.rstrip(".")
    return _address(host) or host


def _address(host: str) -> str | None:
    """The canonical address ``host`` spells, or None when it is no address."""
    if ":" in host and "%" not in host:
        try:
            v6 = ipaddress.IPv6Address(host)
        except ValueError:
            return None
        return _connected(v6.ipv4_mapped or v6)
    if _NUMERIC.fullmatch(host) is None:
        return None
    try:  # the resolver's own reading: octal, hex, and 1 to 4 parts
        return _connected(ipaddress.IPv4Address(socket.inet_aton(host)))
    except OSError:
        return None


def _connected(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """A connection to the unspecified address (``0.0.0.0``, ``::``) reaches this machine."""
    if address.is_unspecified:
        return "127.0.0.1" if address.version == 4 else "::1"
    return str(address)


def host_name(host: str) -> str | None:
    """``host`` as the proxy decides on and connects to it (``normal_host``, a non-ASCII
    name IDNA-encoded), or None when it is neither an address nor a DNS name: letters,
    digits, ``-`` and ``_`` in dot-separated labels, the last one not all digits."""
    if any(c.isspace() or not c.isprintable() for c in host):
        return None
    name = normal_host(host)
    if _address(name) == name:
        return name
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return None
    return None if labels[-1].isdigit() else name


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
    if not host or host_name(host.removeprefix("*.")) is None:
        return f"{pattern!r} is not a host (write example.org, *.example.org or host:port)"
    if port is not None and port != "*" and not (port.isdigit() and 0 < int(port) < 65536):
        return f"{pattern!r} has no valid port (1-65535 or *)"
    return None
