"""``tether serve --connect``: an editor's LSP stream, passed to the warm daemon as is.

Every editor configuration keeps running one command on stdio; the bytes go both ways
between stdio and the daemon's socket, so the editor's sessions live in the daemon and are
shared with the terminal. First the proxy tells the daemon the environment this client
runs in (its API keys and the like belong to its sessions, not to the daemon). When no
daemon can be used (one of another build still serves others' turns after an upgrade, one
that does not answer), the editor is served in this process instead.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Mapping

from tether.daemon.channel import Channel
from tether.daemon.client import connect
from tether.daemon.environment import client_environment


def pump(source_fd: int, send: Channel | None, sink_fd: int | None) -> None:
    """Copy bytes until EOF: stdin to the socket, or the socket to stdout."""
    while True:
        try:
            data = os.read(source_fd, 65536)
        except OSError:
            data = b""
        if not data:
            return
        if send is not None:
            send.sock.sendall(data)
        elif sink_fd is not None:
            view = memoryview(data)
            while view:
                written = os.write(sink_fd, view)
                view = view[written:]


def proxy(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    try:
        channel = connect(env)
    except OSError as e:  # no daemon to use (stuck, of another user, another build's busy)
        said = (
            f"Tether: {e}. This editor is served by a process of its own meanwhile: its "
            "sessions are not shared with the terminal or other editors."
        )
        print(f"[tether] {e}; serving this editor in this process", file=sys.stderr)
        from tether.lsp.main import serve

        return serve(tcp=None, notice=said)  # the editor shows it, not only its log
    channel.notify("tether/clientEnvironment", client_environment(os.getcwd(), env))
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()

    def upstream() -> None:
        pump(stdin, channel, None)
        # The editor closed its end: let the daemon see the client leave.
        with contextlib.suppress(OSError):
            channel.sock.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    pump(channel.sock.fileno(), None, stdout)
    return 0
