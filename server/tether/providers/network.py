"""Proxies and CA certificates for the HTTP clients of a session, from its caller's variables.

The SDKs' HTTP clients (``httpx2``) read ``HTTP(S)_PROXY``, ``ALL_PROXY``, ``NO_PROXY``,
``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` from this process's environment. In the warm daemon
that environment is nobody's in particular, so a session served for a caller gets a client
built from that caller's variables alone (``trust_env`` off, proxies mounted and the trust
store given explicitly). In-process (no caller) the SDKs keep reading the environment
themselves, which then is the caller's.
"""

from __future__ import annotations

import functools
import ipaddress
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigError

if TYPE_CHECKING:
    import httpx2

ProxyMounts = tuple[tuple[str, str | None], ...]
"""(URL pattern, proxy URL or None for a direct connection), as ``httpx2`` mounts them."""


def _variable(env: Mapping[str, str], scheme: str) -> str:
    # As urllib reads them: the lowercase name wins over the uppercase one.
    lower = env.get(f"{scheme}_proxy")
    return (lower if lower is not None else env.get(f"{scheme.upper()}_PROXY", "")).strip()


def proxy_mounts(env: Mapping[str, str]) -> ProxyMounts:
    """The proxies ``env`` asks for, with the same patterns ``httpx2`` derives from the
    process environment (``httpx2._utils.get_environment_proxies``)."""
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        url = _variable(env, scheme)
        if url:
            mounts[f"{scheme}://"] = url if "://" in url else f"http://{url}"
    for host in (h.strip() for h in _variable(env, "no").split(",")):
        if host == "*":
            return ()  # NO_PROXY=*: never a proxy
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
        elif _is_ip(host):
            address, slash, subnet = host.partition("/")
            if ":" in address:
                mounts[f"all://[{address}]/{subnet}" if slash else f"all://[{host}]"] = None
            else:
                mounts[f"all://{host}"] = None
        elif (
            host.lower() == "localhost"
            or host.startswith("[")
            or (host.startswith("*.") and "/" not in host)
        ):
            mounts[f"all://{host}"] = None
        elif "/" not in host:
            mounts[f"all://*{host}"] = None
    return tuple(mounts.items())


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_network(host, strict=False)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=16)
def trust_store(ca_file: str | None, ca_dir: str | None) -> ssl.SSLContext:
    """One SSL context per distinct CA setting (loading a bundle costs milliseconds; a
    context is safe to share between clients and threads)."""
    import httpx2

    try:
        if ca_file:
            return ssl.create_default_context(cafile=ca_file)
        if ca_dir:
            return ssl.create_default_context(capath=ca_dir)
    except (OSError, ssl.SSLError) as e:
        which = (
            f"SSL_CERT_FILE (or REQUESTS_CA_BUNDLE) {ca_file}"
            if ca_file
            else f"SSL_CERT_DIR {ca_dir}"
        )
        raise ConfigError(
            f"the CA certificates in {which} cannot be loaded ({e}): fix the path or unset it"
        ) from e
    # The system's store, as httpx2 finds it without looking at the environment.
    return httpx2.create_ssl_context(trust_env=False)


@dataclass(frozen=True)
class NetworkSettings:
    """A caller's proxies and CA certificates; hashable, so equal settings share clients'
    trust stores."""

    proxies: ProxyMounts = ()
    ca_file: str | None = None
    ca_dir: str | None = None

    @classmethod
    def of(cls, env: Mapping[str, str]) -> NetworkSettings:
        return cls(
            proxy_mounts(env),
            env.get("SSL_CERT_FILE") or env.get("REQUESTS_CA_BUNDLE") or None,
            env.get("SSL_CERT_DIR") or None,
        )

    def client(
        self, factory: Callable[..., httpx2.AsyncClient] | None = None, **kwargs: Any
    ) -> httpx2.AsyncClient:
        """An HTTP client with these settings and nothing from this process's environment;
        ``factory``: the SDK's client class (its connection defaults), else ``httpx2``'s."""
        import httpx2

        verify = trust_store(self.ca_file, self.ca_dir)
        mounts: dict[str, httpx2.AsyncBaseTransport | None] = {
            pattern: None
            if url is None
            else httpx2.AsyncHTTPTransport(proxy=url, verify=verify, trust_env=False)
            for pattern, url in self.proxies
        }
        make = factory or httpx2.AsyncClient
        return make(trust_env=False, verify=verify, mounts=mounts, **kwargs)
