"""Filesystem sockets: a read-only mount does not stop ``connect``, so a daemon listening
on a socket (Docker, an SSH agent, a desktop bus, an editor) would take orders from inside
the sandbox. Each test starts a real listener and checks that nothing reaches it."""

from __future__ import annotations

import os
import shlex
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.sandbox import BwrapSandbox
from tether.settings.model import SandboxSettings

from .conftest import MakeHarness, needs_bwrap, text_of

pytestmark = needs_bwrap


class Listener:
    """A Unix socket server that records what it receives."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.got: list[bytes] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(address)
        self.server.listen()
        self.server.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.got.append(conn.recv(100))
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def listen() -> Iterator[list[Listener]]:
    started: list[Listener] = []
    yield started
    for listener in started:
        listener.close()


def connect(address: str) -> str:
    """A sandboxed command that sends "order" to the socket and says if it got through."""
    code = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f" s.connect({address!r}); s.sendall(b'order'); print('CONNECTED')\n"
        "except OSError as e: print('refused', e)\n"
    )
    # The interpreter itself, not the virtualenv's link to it: the sandbox gives commands a
    # private /tmp, so a checkout under /tmp has no .venv inside it.
    python = os.path.realpath(sys.executable)
    return f"{shlex.quote(python)} -c {shlex.quote(code)}"


def _start(listen: list[Listener], address: Path | str) -> Listener:
    listener = Listener(str(address))
    listen.append(listener)
    return listener


async def _attack(
    make_harness: MakeHarness,
    address: str,
    *,
    settings: SandboxSettings | None = None,
    workspace: Path | None = None,
) -> str:
    h = make_harness(mode="bypassPermissions")
    if settings is not None and workspace is not None:
        h.ctx.config.shell_sandbox = BwrapSandbox(workspace, settings, linger_s=0)
    out = text_of(await h.call("Bash", command=connect(address)))
    assert "CONNECTED" in out or "refused" in out, f"the probe did not run: {out}"
    return out


async def test_a_socket_beside_the_workspace(
    make_harness: MakeHarness, outside: Path, listen: list[Listener]
) -> None:
    daemon = _start(listen, outside / "docker.sock")
    out = await _attack(make_harness, daemon.address)
    assert "CONNECTED" not in out and daemon.got == []


async def test_a_socket_in_the_home_directory(
    make_harness: MakeHarness, home: Path, listen: list[Listener]
) -> None:
    (home / ".ssh").mkdir(exist_ok=True)
    agent = _start(listen, home / ".ssh" / "agent.sock")
    session = _start(listen, home / "session.sock")
    for daemon in (agent, session):
        out = await _attack(make_harness, daemon.address)
        assert "CONNECTED" not in out and daemon.got == []


async def test_a_socket_in_the_hosts_tmp(make_harness: MakeHarness, listen: list[Listener]) -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        daemon = _start(listen, Path(tmp) / "editor.sock")
        out = await _attack(make_harness, daemon.address)
        assert "CONNECTED" not in out and daemon.got == []


async def test_a_socket_in_a_path_settings_make_writable(
    make_harness: MakeHarness, workspace: Path, outside: Path, listen: list[Listener]
) -> None:
    daemon = _start(listen, outside / "bus.sock")
    settings = SandboxSettings(writable_paths=[str(outside)])
    out = await _attack(make_harness, daemon.address, settings=settings, workspace=workspace)
    assert "CONNECTED" not in out and daemon.got == []


async def test_a_socket_reached_through_a_symlink_in_the_workspace(
    make_harness: MakeHarness, workspace: Path, outside: Path, listen: list[Listener]
) -> None:
    daemon = _start(listen, outside / "agent.sock")
    (workspace / "agent.sock").symlink_to(outside / "agent.sock")
    out = await _attack(make_harness, str(workspace / "agent.sock"))
    assert "CONNECTED" not in out and daemon.got == []


async def test_an_abstract_socket_on_the_host(
    make_harness: MakeHarness, listen: list[Listener]
) -> None:
    daemon = _start(listen, f"\0tether-test-{os.getpid()}")
    out = await _attack(make_harness, daemon.address)
    assert "CONNECTED" not in out and daemon.got == []


async def test_a_host_daemons_socket_inside_the_workspace(
    make_harness: MakeHarness, workspace: Path, listen: list[Listener]
) -> None:
    """``tmux -S ./dev.sock``, ``nvim --listen ./x``, a dev database's socket in the project:
    the daemon is the host's, and so is what it runs when told to."""
    (workspace / ".devenv" / "state").mkdir(parents=True)
    for address in (workspace / "dev.sock", workspace / ".devenv" / "state" / "pg.sock"):
        daemon = _start(listen, address)
        probe = connect(address.name if address.parent == workspace else str(address))
        h = make_harness(mode="bypassPermissions")
        out = text_of(await h.call("Bash", command=probe))
        assert "refused" in out and daemon.got == [], out


async def test_sockets_a_command_binds_in_the_workspace_still_work(
    make_harness: MakeHarness, workspace: Path
) -> None:
    """The control: the sandbox does not forbid Unix sockets, only reaching the host's."""
    code = (
        "import socket\n"
        "s=socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen()\n"
        "c=socket.socket(socket.AF_UNIX); c.connect('own.sock'); c.sendall(b'order')\n"
        "print('GOT', s.accept()[0].recv(10))\n"
    )
    python = os.path.realpath(sys.executable)
    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=f"{shlex.quote(python)} -c {shlex.quote(code)}"))
    assert "GOT b'order'" in out, out


async def test_the_warm_daemons_own_socket(
    make_harness: MakeHarness, listen: list[Listener], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that reached Tether's daemon could answer its own permission questions."""
    from tether.daemon.paths import ensure_private, socket_path

    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path(tempfile.gettempdir())
    with tempfile.TemporaryDirectory(dir=base) as runtime:
        monkeypatch.setenv("TETHER_RUNTIME_DIR", runtime)
        ensure_private(Path(runtime))
        daemon = _start(listen, socket_path())
        out = await _attack(make_harness, daemon.address)
        assert "CONNECTED" not in out and daemon.got == []
