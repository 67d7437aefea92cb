"""The filtering proxy a sandboxed command's traffic goes through.

The sandbox has no network of its own (``--unshare-net``). The daemon listens on a Unix
socket bound into it; the gate (``sandbox/gate/forward.py``) relays each connection made to
its loopback port there. On that socket this proxy speaks the three ways clients name a
destination, telling them apart by the first byte:

- SOCKS5 (``ALL_PROXY=socks5h://…``): CONNECT only, the name resolved here;
- HTTP ``CONNECT host:port`` (``HTTPS_PROXY``): a tunnel, TLS stays end to end;
- plain HTTP with an absolute URI (``HTTP_PROXY``): one request per connection
  (``Connection: close``), so a client that reuses a proxy connection cannot reach a
  second host through the first one's decision.

Names are resolved by the proxy (on the host), never by the sandbox. Each destination is
decided once per command (``Decide``: rules, then the user); concurrent connections to one
undecided destination wait for the same answer. A refusal answers the client in its own
protocol (403, SOCKS "not allowed by ruleset") and is recorded for the model.

Why hand-written: the allowed dependencies have no proxy, and the candidates (proxy.py,
mitmproxy) run their own processes or loops, while a decision here waits on a question in
the editor on the command's own event loop. What it costs is measured by
``bench/network.py``.

Upstream, the proxy honours the caller's own proxy variables (a corporate proxy):
``https_proxy`` for tunnels, ``http_proxy`` for plain requests, ``no_proxy`` exempting
hosts; ``TETHER_PROXY_RESOLVE`` (``name=address,…``) pins names to addresses, as curl's
``--resolve`` does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import unquote, urlsplit

from tether.network.hosts import Decide, Verdict, host_name, normal_host
from tether.network.peer import Peer

log = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024
CHUNK = 256 * 1024
CONNECT_TIMEOUT_S = 15.0
HEAD_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 64
"""Open at once per command (package managers use 10 to 50); more are closed at once."""
SOCKS_NOT_ALLOWED = 0x02
SOCKS_UNREACHABLE = 0x04
SOCKS_BAD_COMMAND = 0x07
SOCKS_BAD_ADDRESS = 0x08
_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te"})


@dataclass(frozen=True)
class Upstream:
    """How the proxy itself reaches the world (the caller's, not the daemon's)."""

    resolve: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    http_proxy: str | None = None
    https_proxy: str | None = None
    no_proxy: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Upstream:
        def var(name: str) -> str | None:
            return env.get(name.lower()) or env.get(name.upper()) or None

        pins: dict[str, str] = {}
        for item in (env.get("TETHER_PROXY_RESOLVE") or "").split(","):
            name, _, address = item.partition("=")
            if name.strip() and address.strip():
                pins[normal_host(name)] = address.strip()
        return cls(
            resolve=pins,
            http_proxy=var("http_proxy"),
            https_proxy=var("https_proxy") or var("http_proxy"),
            no_proxy=var("no_proxy") or "",
        )

    def via(self, host: str, *, tunnel: bool) -> Via | None:
        """The upstream proxy to reach ``host`` through, or None (direct)."""
        url = self.https_proxy if tunnel else self.http_proxy
        if not url or host in self.resolve:
            return None
        if _exempt(host, self.no_proxy):
            return None
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.hostname is None:
            return None
        auth = None
        if parts.username is not None:  # percent-encoded in the URL, as curl reads it
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            auth = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        return Via(parts.hostname, parts.port or 80, auth)


@dataclass(frozen=True)
class Via:
    """An upstream proxy, and the ``Proxy-Authorization`` its URL's credentials make."""

    host: str
    port: int
    authorization: str | None = None

    def header(self) -> bytes:
        if self.authorization is None:
            return b""
        return f"Proxy-Authorization: {self.authorization}\r\n".encode("latin-1")


def _exempt(host: str, no_proxy: str) -> bool:
    """Does ``no_proxy`` (curl's and requests' reading: ``*``, names, ``.suffix``) exempt
    ``host``? Ports in entries are ignored."""
    for entry in no_proxy.split(","):
        name = normal_host(entry.strip().split(":")[0] if entry.count(":") == 1 else entry)
        if name == "*" or (
            name and (host == name.lstrip(".") or host.endswith("." + name.lstrip(".")))
        ):
            return True
    return False


@dataclass(frozen=True)
class Blocked:
    host: str
    port: int
    why: str


class Admission(Protocol):
    """Who may use the proxy at all (``tether.network.peer.Lineage``: the command's own
    processes)."""

    async def admits(self, peer: Peer) -> bool: ...


OUTSIDER = "refused a connection from outside this command"


class FilteringProxy:
    """Serves one sandboxed command's connections (``serve``); ``blocked`` lists what it
    refused, each destination once. ``admission``: who may connect (None: anyone who can
    reach the socket)."""

    def __init__(
        self,
        decide: Decide,
        upstream: Upstream | None = None,
        admission: Admission | None = None,
    ) -> None:
        self._decide = decide
        self._upstream = upstream or Upstream()
        self._admission = admission
        self._outsiders = 0
        self._verdicts: dict[tuple[str, int], asyncio.Future[Verdict]] = {}
        self._blocked: dict[tuple[str, int], Blocked] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._over_limit = 0

    @property
    def blocked(self) -> list[Blocked]:
        over = []
        if self._over_limit:
            why = f"refused {self._over_limit} connections beyond {MAX_CONNECTIONS} open at once"
            over = [Blocked("network proxy", 0, why)]
        if self._outsiders:
            times = f" ({self._outsiders} times)" if self._outsiders > 1 else ""
            over.append(Blocked("network proxy", 0, OUTSIDER + times))
        return [*over, *self._blocked.values()]

    async def serve(self, listener: socket.socket) -> None:
        """Accept on ``listener`` (already listening) until ``close``."""
        self._server = await asyncio.start_unix_server(self._accepted, sock=listener)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for verdict in self._verdicts.values():
            if not verdict.done():
                verdict.cancel()

    # -- one connection ----------------------------------------------------------------

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._tasks) >= MAX_CONNECTIONS:  # each holds descriptors in the daemon
            self._over_limit += 1
            writer.close()
            return
        self._tasks.add(task)
        try:
            if self._admission is not None and not await self._admitted(writer):
                return
            first = await asyncio.wait_for(reader.readexactly(1), HEAD_TIMEOUT_S)
            if first == b"\x05":
                await self._socks(reader, writer)
            else:
                await self._http(first, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, OSError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:  # one bad connection must not take the others down
            log.exception("the network proxy failed on a connection")
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _admitted(self, writer: asyncio.StreamWriter) -> bool:
        assert self._admission is not None
        peer = writer.get_extra_info("socket")
        if peer is not None and await self._admission.admits(peer):
            return True
        self._outsiders += 1
        log.warning("the network proxy refused a connection from outside its command")
        return False

    async def _allowed(self, host: str, port: int) -> Verdict:
        key = (normal_host(host), port)
        pending = self._verdicts.get(key)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._verdicts[key] = pending
            try:
                pending.set_result(await self._decide(*key))
            except asyncio.CancelledError:
                pending.cancel()
                raise
            except Exception as e:  # a decision that cannot be made is a refusal
                log.warning("network decision for %s:%d failed: %s", *key, e)
                pending.set_result(Verdict(False, f"no decision ({e})"))
        verdict = await asyncio.shield(pending)
        if not verdict.allowed:
            self._blocked.setdefault(key, Blocked(key[0], port, verdict.why))
        return verdict

    async def _decide_and_open(
        self, writer: asyncio.StreamWriter, host: str, port: int, *, tunnel: bool
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Via | None] | None:
        """The upstream connection for an HTTP proxy request, or None once the client was
        answered 403 (refused) or 502 (unreachable)."""
        verdict = await self._allowed(host, port)
        if not verdict.allowed:
            _answer(writer, 403, _refusal(host, port, verdict))
            return None
        try:
            return await self._open(host, port, tunnel=tunnel)
        except (OSError, TimeoutError, ConnectionError) as e:
            _answer(writer, 502, f"cannot reach {host}:{port}: {e}")
            return None

    async def _open(
        self, host: str, port: int, *, tunnel: bool
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Via | None]:
        """A connection to ``host:port`` (through the caller's proxy where it has one);
        the upstream HTTP proxy when it expects an absolute-URI request."""
        host = normal_host(host)
        via = self._upstream.via(host, tunnel=tunnel)
        if via is None:
            address = self._upstream.resolve.get(host, host)
            r, w = await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT_S)
            return r, w, None
        r, w = await asyncio.wait_for(
            asyncio.open_connection(via.host, via.port), CONNECT_TIMEOUT_S
        )
        if not tunnel:
            return r, w, via
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        w.write(
            f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n".encode() + via.header() + b"\r\n"
        )
        head = await asyncio.wait_for(reader_head(r), CONNECT_TIMEOUT_S)
        status = head.split(b"\r\n", 1)[0].split()
        if len(status) < 2 or status[1] != b"200":
            w.close()
            raise ConnectionError(f"the upstream proxy refused {target}: {head_line(head)}")
        return r, w, None

    async def _socks(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # the whole handshake within the time an HTTP head gets: a stalled one holds a socket
        destination = await asyncio.wait_for(
            self._socks_destination(reader, writer), HEAD_TIMEOUT_S
        )
        if destination is None:
            return
        host, port = destination
        if not (await self._allowed(host, port)).allowed:
            writer.write(_socks_reply(SOCKS_NOT_ALLOWED))
            return
        try:
            up_r, up_w, _ = await self._open(host, port, tunnel=True)
        except (OSError, TimeoutError, ConnectionError):
            writer.write(_socks_reply(SOCKS_UNREACHABLE))
            return
        writer.write(_socks_reply(0))
        await _relay(reader, writer, up_r, up_w)

    async def _socks_destination(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[str, int] | None:
        """The CONNECT request's destination, or None once the client has been answered."""
        count = (await reader.readexactly(1))[0]
        await reader.readexactly(count)  # offered methods: "no authentication" is answered
        writer.write(b"\x05\x00")
        version, command, _reserved, kind = await reader.readexactly(4)
        if version != 5:
            return None
        if kind == 1:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif kind == 3:
            size = (await reader.readexactly(1))[0]
            try:
                host = (await reader.readexactly(size)).decode("ascii")
            except UnicodeDecodeError:  # clients send names IDNA-encoded (xn--)
                writer.write(_socks_reply(SOCKS_BAD_ADDRESS))
                return None
        elif kind == 4:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        else:
            writer.write(_socks_reply(SOCKS_BAD_ADDRESS))
            return None
        port = int.from_bytes(await reader.readexactly(2), "big")
        name = host_name(host)
        if name is None:
            writer.write(_socks_reply(SOCKS_BAD_ADDRESS))
            return None
        if command != 1:
            writer.write(_socks_reply(SOCKS_BAD_COMMAND))
            return None
        return name, port

    async def _http(
        self, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head = first + await asyncio.wait_for(reader_head(reader), HEAD_TIMEOUT_S)
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split()
        if len(parts) != 3:
            _answer(writer, 400, "not an HTTP proxy request")
            return
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, port = _authority(target, 443)
            host = host_name(host) if host is not None else None
            if host is None:
                _answer(writer, 400, f"{target!r} is not a host name or address (with a port)")
                return
            upstream = await self._decide_and_open(writer, host, port, tunnel=True)
            if upstream is None:
                return
            up_r, up_w, _ = upstream
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await _relay(reader, writer, up_r, up_w)
            return
        url = urlsplit(target)
        if url.scheme.lower() != "http" or not url.hostname:
            _answer(writer, 400, "a proxy request names an absolute http:// URL (https: CONNECT)")
            return
        host, port = host_name(url.hostname), url.port or 80
        if host is None:
            _answer(writer, 400, f"{url.hostname!r} is not a host name or address")
            return
        upstream = await self._decide_and_open(writer, host, port, tunnel=False)
        if upstream is None:
            return
        up_r, up_w, absolute = upstream
        path = (
            target
            if absolute is not None
            else (url.path or "/") + (f"?{url.query}" if url.query else "")
        )
        kept = [
            h
            for h in rest.split(b"\r\n")
            if h and h.split(b":", 1)[0].strip().lower().decode("latin-1") not in _HOP
        ]
        if absolute is not None and absolute.authorization is not None:
            kept.append(absolute.header().rstrip(b"\r\n"))
        request = [f"{method} {path} {version}".encode("latin-1"), *kept, b"Connection: close"]
        up_w.write(b"\r\n".join(request) + b"\r\n\r\n")
        await _relay(reader, writer, up_r, up_w)


async def reader_head(reader: asyncio.StreamReader) -> bytes:
    """Up to and including the blank line ending an HTTP head (at most ``MAX_HEAD``)."""
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError as e:
        raise ConnectionError("the request head is too long") from e


def head_line(head: bytes) -> str:
    return head.split(b"\r\n", 1)[0].decode("latin-1", "replace")


def _authority(text: str, default: int) -> tuple[str | None, int]:
    parts = urlsplit(f"//{text}")
    try:
        return parts.hostname, parts.port or default
    except ValueError:
        return None, default


def _refusal(host: str, port: int, verdict: Verdict) -> str:
    return (
        f"tether sandbox: network access to {host}:{port} refused ({verdict.why}); the user "
        "can allow it in settings or when asked"
    )


def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode("utf-8", "replace")
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def _socks_reply(code: int) -> bytes:
    return bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0])


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(CHUNK):
            dst.write(data)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()
    except (ConnectionError, OSError):
        pass


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_r: asyncio.StreamReader,
    up_w: asyncio.StreamWriter,
) -> None:
    """Both directions until both ends are done (half-closes passed on)."""
    try:
        await writer.drain()
        await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))
    finally:
        up_w.close()
        with contextlib.suppress(Exception):
            await up_w.wait_closed()


def listening_socket(path: str) -> socket.socket:
    """A Unix socket listening at ``path`` (only its owner may connect: the directory is
    private), ready for ``FilteringProxy.serve``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock
