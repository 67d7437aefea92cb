"""The sandbox's end of the network proxy: a loopback port relaying to the daemon.

The command runs with no network of its own (``--unshare-net``: only loopback). When the
policy names a proxy socket (bound into the sandbox), the gate listens on a free port of
127.0.0.1 in the sandbox's own network namespace, points the command's proxy variables at
it, and relays every connection made there to the socket, where the daemon's filtering
proxy decides (``tether/network/proxy.py``). Threads in the gate's parent process, which
the command cannot trace; standard library only.
"""

from __future__ import annotations

import os
import socket
import threading

CHUNK = 1 << 16


def listen() -> socket.socket:
    """The loopback listener (not inherited by the command: Python sockets are
    close-on-exec)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
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


def serve(listener: socket.socket, target: str) -> None:
    """Relay each connection to ``target`` (a Unix socket path), in daemon threads."""
    threading.Thread(target=_accept, args=(listener, target), daemon=True).start()


def _accept(listener: socket.socket, target: str) -> None:
    while True:
        try:
            client, _address = listener.accept()
        except OSError:
            return
        threading.Thread(target=_connect, args=(client, target), daemon=True).start()


def _connect(client: socket.socket, target: str) -> None:
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # relayed as it comes
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(target)
    except OSError as e:
        os.write(2, f"tether sandbox: the network proxy is gone ({e.strerror})\n".encode())
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
    back.start()
    _copy(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _copy(src: socket.socket, dst: socket.socket) -> None:
    """One direction; its end is passed on as a half-close (a failure ends both)."""
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
