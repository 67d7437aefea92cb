"""The warm daemon's server: a Unix socket private to the user, one LSP connection per
client, one registry of workspaces and sessions shared by all of them.

Security: the socket lives in a 0700 runtime directory, is created 0600, and each
connection's peer uid (``SO_PEERCRED``) must be the daemon's own; there is no TCP. Life:
the daemon exits after ``idle_timeout`` seconds without clients or open sessions, on
``tether/daemonStop`` (``tether daemon stop``, or a client that finds an older build
running), and on SIGTERM — closing every session, so transcripts are flushed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pydantic import Field
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import lsp_method

from tether import __version__
from tether.core.environ import Caller
from tether.core.executor import install_default_executor
from tether.daemon.build import build_id
from tether.daemon.paths import ensure_private, warm_path
from tether.daemon.printing import (
    InputParams,
    PrintParams,
    PrintService,
    RunCommand,
    route_standard_streams,
)
from tether.daemon.warm import few_malloc_arenas, warm_up
from tether.lsp.editor_first import EditorFirstLoop, FdInput
from tether.lsp.handlers import register
from tether.lsp.hub import SessionHub
from tether.lsp.io import EditorMessages
from tether.lsp.params import InvalidParamsError, parse_params
from tether.lsp.protocol import TetherProtocol
from tether.lsp.server import TetherServer
from tether.lsp.wire import wire_errors
from tether.protocol.base import LenientWireModel
from tether.session.hosted import HostedSession
from tether.session.router import ClientGone
from tether.workspace.registry import Sessions

if TYPE_CHECKING:
    from tether.session.session import Session

log = logging.getLogger(__name__)


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


class ClientEnvironmentParams(LenientWireModel):
    cwd: str | None = None
    env: dict[str, str]
    """The client's whole environment: its sessions' processes get exactly this."""
    umask: int | None = Field(default=None, ge=0, le=0o7777)

    def caller(self) -> Caller:
        return Caller(self.env, cwd=Path(self.cwd) if self.cwd else None, umask=self.umask)


class DaemonStopParams(LenientWireModel):
    when_idle: bool = False
    """Leave once no client is connected and no turn runs, not now."""


UNREAD_LIMIT = 64 * 1024 * 1024
"""What a client may leave unread before the daemon drops it."""


class SocketWriter:
    """pygls's writer interface over one connection. Writes never wait; a client that stops
    reading (stopped, or its output blocked) is dropped once ``unread_limit`` bytes wait for
    it, as if it had left, instead of the daemon holding all it is sent for as long as it
    lives."""

    def __init__(self, writer: asyncio.StreamWriter, unread_limit: int = UNREAD_LIMIT) -> None:
        self._writer = writer
        self._limit = unread_limit

    def write(self, data: bytes) -> None:
        if self._writer.is_closing():
            return
        self._writer.write(data)
        transport = self._writer.transport
        if transport.get_write_buffer_size() > self._limit:
            log.warning(
                "a client left %d MiB unread: dropped, its runs stop as if it had left",
                transport.get_write_buffer_size() >> 20,
            )
            transport.abort()

    def close(self) -> None:
        self._writer.close()


class ConnectionProtocol(TetherProtocol):
    """``exit`` ends this client's connection, not the daemon; the daemon's own methods
    answer before ``initialize`` (``tether daemon status`` needs no session)."""

    before_initialize = TetherProtocol.before_initialize | {
        "tether/daemonInfo",
        "tether/daemonStop",
        "tether/clientEnvironment",
        "tether/print",
        "tether/input",
        "tether/interrupt",
    }

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        if self.writer is not None:
            self.writer.close()
        yield from ()


class ConnectionServer(TetherServer):
    def __init__(self) -> None:
        super().__init__(protocol_cls=ConnectionProtocol)


class Daemon:
    def __init__(
        self,
        socket_path: Path,
        *,
        run_command: RunCommand,
        idle_timeout: float = 300.0,  # the command line decides (``commands.idle_timeout``)
    ):
        self.socket_path = socket_path
        self.run_command = run_command
        """How a ``tether/print`` call's command line runs (print mode, in-process)."""
        self.idle_timeout = idle_timeout
        self.build = build_id()
        self.started = time.time()
        self.sessions = Sessions()
        self.clients = 0
        self._printing: set[PrintService] = set()
        """The connections' print-mode services: a command running when the daemon stops
        is interrupted and waited for, so its session is saved."""
        self._last_activity = time.monotonic()
        self._stop = asyncio.Event()
        self._retiring: asyncio.Task[None] | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.warm = threading.Event()
        """Set once the warm-up call is done (``daemon/warm.py``)."""

    # -- life -------------------------------------------------------------------------

    async def run(self) -> int:
        ensure_private(self.socket_path.parent)
        if self.socket_path.exists() or self.socket_path.is_symlink():
            self.socket_path.unlink()  # a dead daemon's (the caller checked none answers)
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self._accept, path=str(self.socket_path))
        finally:
            os.umask(old)
        os.chmod(self.socket_path, 0o600)
        pid_file = self.socket_path.with_suffix(".pid")
        pid_file.write_text(f"{os.getpid()}\n")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        idle = loop.create_task(self._exit_when_idle())
        log.info("tether daemon %s listening on %s", self.build, self.socket_path)
        try:
            await self._stop.wait()
        finally:
            idle.cancel()
            server.close()
            await self._stop_commands()
            try:  # turns are cancelled and their transcripts flushed: that is quick
                await asyncio.wait_for(self.sessions.shutdown(), SHUTDOWN_TIMEOUT_S)
            except TimeoutError:
                log.warning("the sessions did not close within %.0f s", SHUTDOWN_TIMEOUT_S)
            for path in (self.socket_path, pid_file, warm_path(self.socket_path)):
                with contextlib.suppress(OSError):
                    path.unlink()
        return 0

    def stop(self) -> None:
        self._stop.set()

    async def _stop_commands(self, timeout: float = 10.0) -> None:
        services = list(self._printing)
        for service in services:
            service.abandon()
        for service in services:
            if not await asyncio.to_thread(service.wait, timeout):
                log.warning("a print-mode command did not stop within %.0f s", timeout)

    async def _exit_when_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle_timeout / 4, 5.0))
            if self.clients or self._in_use():
                self._last_activity = time.monotonic()
                continue
            if time.monotonic() - self._last_activity >= self.idle_timeout:
                log.info("no client and no session for %.0f s: exiting", self.idle_timeout)
                self._stop.set()
                return

    def _in_use(self) -> bool:
        """A session is open (an editor's, a print-mode call's), whether or not it runs."""
        return bool(self.sessions.hosted) or any(
            workspace.sessions for workspace in self.sessions.workspaces.values()
        )

    def _retire(self) -> None:
        """Leave once no client is connected and no turn runs (a newer build is installed:
        its clients run in-process meanwhile, and start it once this one is gone)."""
        if self._retiring is None:
            self._retiring = asyncio.get_running_loop().create_task(self._leave_when_idle())

    async def _leave_when_idle(self) -> None:
        while True:  # polled: clients and turns come and go on many paths
            running = any(
                session.busy or session.tasks_running
                for workspace in self.sessions.workspaces.values()
                for session in workspace.sessions.values()
            )
            if not (self.clients or running):
                break
            await asyncio.sleep(0.5)
        log.info("a newer build asked this daemon to leave once idle: leaving")
        self._stop.set()

    def _share(self, session: Session) -> Callable[[], None]:
        """A print-mode call's session joins the shared ones (called on the call's loop)."""
        return self.sessions.host(HostedSession(session, asyncio.get_running_loop()))

    def info(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "build": self.build,
            "pid": os.getpid(),
            "startedAt": self.started,
            "clients": self.clients,
            "warm": self.warm.is_set(),
            "sessions": [
                {
                    "sessionId": s.session_id,
                    "workspace": str(s.cwd),
                    "busy": s.busy,
                    "tasks": s.tasks_running,
                }
                for w in self.sessions.workspaces.values()
                for s in w.sessions.values()
            ]
            + [
                {"sessionId": s.session_id, "workspace": str(s.cwd), "busy": s.busy, "print": True}
                for s in list(self.sessions.hosted.values())
            ],
            "retires": True,  # tether/daemonStop {"whenIdle": true} is understood
        }

    # -- clients ----------------------------------------------------------------------

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A client connected (called as the connection is made, before the transport
        reads anything): the loop reads the socket itself, between any two callbacks
        (``lsp.editor_first``), through a descriptor of its own; the transport writes."""
        sock = writer.get_extra_info("socket")
        if sock is None or peer_uid(sock) != os.getuid():
            log.warning("refused a connection from another user")
            writer.close()
            return
        transport = writer.transport
        if isinstance(transport, asyncio.ReadTransport):
            transport.pause_reading()
        fd = os.dup(sock.fileno())
        task = asyncio.get_running_loop().create_task(self._serve(fd, writer))
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _serve(self, fd: int, writer: asyncio.StreamWriter) -> None:
        self.clients += 1
        self._last_activity = time.monotonic()
        server = ConnectionServer()
        hub = SessionHub(server, self.sessions)
        register(server, hub)
        printing = self._register_daemon_methods(server, hub)
        self._printing.add(printing)
        server.protocol.set_writer(SocketWriter(writer))
        client = FdInput(fd, EditorMessages(server.protocol).feed)
        # Until the client leaves, or ``exit`` closes the connection from this side.
        closed = asyncio.ensure_future(_closed(writer))
        try:
            await asyncio.wait([client.closed, closed], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass  # the daemon is stopping
        finally:
            client.close()
            closed.cancel()
            os.close(fd)
            self.clients -= 1
            self._last_activity = time.monotonic()
            _abandon_questions(server)
            printing.abandon()
            self._printing.discard(printing)
            try:
                await hub.disconnect()
            except Exception:
                log.exception("closing a client's sessions failed")
            writer.close()

    def _register_daemon_methods(self, server: TetherServer, hub: SessionHub) -> PrintService:
        loop: list[asyncio.AbstractEventLoop] = []

        def notify(method: str, params: dict[str, Any]) -> None:
            # From the call's thread: the connection belongs to the daemon's loop.
            loop[0].call_soon_threadsafe(server.protocol.notify, method, params)

        printing = PrintService(notify, self.run_command, self._share, self.warm)

        @server.feature("tether/print")
        @wire_errors
        async def print_mode(ls: TetherServer, params: Any) -> dict[str, Any]:
            loop[:] = [asyncio.get_running_loop()]
            parsed = parse_params(PrintParams, params)
            if parsed.build is not None and parsed.build != self.build:
                raise JsonRpcInvalidParams(
                    f"this daemon is build {self.build}, the client {parsed.build}",
                    data={"daemonBuild": self.build},
                )
            return await printing.run(parsed)

        @server.feature("tether/input")
        def print_input(ls: TetherServer, params: Any) -> None:
            try:
                printing.give_input(parse_params(InputParams, params))
            except InvalidParamsError as e:
                log.warning("tether/input: %s", e)

        @server.feature("tether/interrupt")
        def print_interrupt(ls: TetherServer, params: Any) -> None:
            printing.interrupt()

        @server.feature("tether/clientEnvironment")
        def client_environment(ls: TetherServer, params: Any) -> None:
            try:
                hub.use_caller(parse_params(ClientEnvironmentParams, params).caller())
            except InvalidParamsError as e:
                log.warning("tether/clientEnvironment: %s", e)

        @server.feature("tether/daemonInfo")
        def daemon_info(ls: TetherServer, params: Any) -> dict[str, Any]:
            return self.info()

        @server.feature("tether/daemonStop")
        @wire_errors
        def daemon_stop(ls: TetherServer, params: Any) -> None:
            if parse_params(DaemonStopParams, params).when_idle:
                self._retire()
                return
            # Answer first, then stop: the caller waits for the socket to go away.
            asyncio.get_running_loop().call_later(0.05, self._stop.set)

        return printing


async def _closed(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):  # a lost connection is how a client leaves
        await writer.wait_closed()


def _abandon_questions(server: TetherServer) -> None:
    """The client left: what the daemon asked it (permission questions) will never be
    answered there; the session asks another attached client instead."""
    pending: dict[Any, Any] = server.protocol._request_futures  # pyright: ignore[reportPrivateUsage]
    for future in list(pending.values()):
        if isinstance(future, concurrent.futures.Future) and not future.done():
            future.set_exception(ClientGone("the client disconnected"))


SHUTDOWN_TIMEOUT_S = 10.0


def run_daemon(socket_path: Path, idle_timeout: float, run_command: RunCommand) -> int:
    few_malloc_arenas()
    route_standard_streams()
    daemon = Daemon(socket_path, run_command=run_command, idle_timeout=idle_timeout)
    warm = warm_path(socket_path)
    with contextlib.suppress(OSError):
        warm.unlink()  # a dead daemon's

    def warming_up() -> None:
        warm_up(run_command, daemon.warm)
        with contextlib.suppress(OSError):
            warm.touch(0o600)

    # What a print-mode call does once per process, done while the daemon waits for one.
    warming = threading.Thread(target=warming_up, name="tether-warm-up", daemon=True)
    warming.start()

    async def main() -> int:
        install_default_executor()  # a thread stuck for good must not hold the exit
        return await daemon.run()

    with asyncio.Runner(loop_factory=EditorFirstLoop) as runner:
        code = runner.run(main())
    # Nor may one at the interpreter's exit: the sessions are saved, the socket is gone.
    sys.stderr.flush()
    os._exit(code)
