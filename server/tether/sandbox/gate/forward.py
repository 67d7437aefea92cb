"""The sandbox's end of the network proxy: a loopback port relaying to the daemon.

The command runs with no network of its own (``--unshare-net``: only loopback). When the
policy names a proxy socket (bound into the sandbox), the gate listens on a free port of
127.0.0.1 in the sandbox's own network namespace, points the command's proxy variables at
it, and relays every connection made there to the socket, where the daemon's filtering
proxy decides (``tether/network/proxy.py``). Threads in the gate's parent process, which
the command cannot trace; standard library only, and only its C modules (``_socket``,
``_thread``): ``socket`` and ``threading`` would double the gate's start-up, which every
sandboxed command waits for.
"""

from __future__ import annotations

import _socket
import _thread
import os

CHUNK = 1 << 16


def listen() -> _socket.socket:
    """The loopback listener (not inherited by the command: Python sockets are
    close-on-exec)."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def proxy_env(port: int) -> dict[str, str]:
    """What points the command's tools at the proxy: the usual variables in both cases
    (curl reads only lower-case ``http_proxy``), and the tools' own where they do not
    read those (npm's configuration, cargo)."""
    http = f"http://127.0.0.1:{port}"
    socks = f"socks5h://127.0.0.1:{port}"
    out: dict[str, str] = {}
    for name, value in (
        ("http_proxy", http),
        ("https_proxy", http),
        ("all_proxy", socks),
        ("no_proxy", "localhost,127.0.0.1,::1"),
    ):
        out[name] = out[name.upper()] = value
    out["npm_config_proxy"] = out["npm_config_https_proxy"] = http
    out["CARGO_HTTP_PROXY"] = http
    return out


def serve(listener: _socket.socket, target: str) -> None:
    """Relay each connection to ``target`` (a Unix socket path), on threads of their own."""
    _thread.start_new_thread(_accept, (listener, target))


def _accept(listener: _socket.socket, target: str) -> None:
    while True:
        try:
            # accept4 with SOCK_CLOEXEC: what ``socket.socket.accept`` calls (not in the stubs)
            accepted: tuple[int, object] = getattr(listener, "_accept")()  # noqa: B009
        except OSError:
            return
        client = _socket.socket(fileno=accepted[0])
        _thread.start_new_thread(_connect, (client, target))


def _connect(client: _socket.socket, target: str) -> None:
    client.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)  # relayed as it comes
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(target)
    except OSError as e:
        os.write(2, f"tether sandbox: the network proxy is gone ({e.strerror})\n".encode())
        client.close()
        upstream.close()
        return
    back = _thread.allocate_lock()
    back.acquire()
    _thread.start_new_thread(_copy, (upstream, client, back))
    _copy(client, upstream)
    back.acquire()  # the other direction is done
    client.close()
    upstream.close()


def _copy(src: _socket.socket, dst: _socket.socket, done: _thread.LockType | None = None) -> None:
    """One direction; its end is passed on as a half-close (a failure ends both).
    ``done``: released when it ends."""
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
        dst.shutdown(_socket.SHUT_WR)
    except OSError:
        for s in (src, dst):
            try:
                s.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass
    finally:
        if done is not None:
            done.release()
