"""``tether serve``: build the server and serve stdio (or TCP)."""

from __future__ import annotations

import sys

from tether.lsp.handlers import register
from tether.lsp.hub import SessionHub
from tether.lsp.io import serve_stdio
from tether.lsp.plain_turns import PlainTurns
from tether.lsp.server import TetherServer


def create_server() -> tuple[TetherServer, SessionHub]:
    server = TetherServer()
    hub = SessionHub(server)
    register(server, hub, PlainTurns(server, hub))
    return server, hub


def serve(tcp: str | None = None, notice: str | None = None) -> int:
    """``notice``: shown to the user as the editor connects (``serve --connect`` could not
    use the warm daemon, and says why)."""
    # Nothing but protocol messages may reach stdout: keep the real stream for the
    # protocol and point sys.stdout at stderr for any stray print.
    stdout = sys.stdout.buffer
    stdin = sys.stdin.buffer
    sys.stdout = sys.stderr
    server, hub = create_server()
    server.startup_notice = notice
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
        return 0
    return serve_stdio(server.protocol, server.thread_pool, hub.shutdown, stdin, stdout)
