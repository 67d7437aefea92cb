"""The sandbox prepared for the next command while the model thinks
(``sandbox/prestart.py``) confines exactly as a fresh one: it serves a command only when that
command's own layout, directory and environment are the same, it never serves two commands,
and what it held goes away with it."""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tether.sandbox import BwrapSandbox

from .conftest import Harness, MakeHarness, needs_bwrap, text_of

MARK = "--stdin"
"""Alone in the command line of a prepared sandbox's bubblewrap (its gate reads the job)."""
WHERE = (
    "if tr '\\0' '\\n' </proc/1/cmdline | grep -qx -- '--std''in'; "
    "then echo PREPARED; else echo FRESH; fi"
)
"""Inside the sandbox, PID 1 is its bubblewrap: says which kind of sandbox runs the command."""


def sandbox_of(h: Harness) -> BwrapSandbox:
    sandbox = h.ctx.config.shell_sandbox
    assert isinstance(sandbox, BwrapSandbox)
    return sandbox


def prepared_pids() -> list[int]:
    """This process's children that are prepared sandboxes waiting for a command."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = next(
            (line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), ""
        )
        if ppid == str(os.getpid()) and MARK.encode() in cmdline.split(b"\0"):
            found.append(int(entry.name))
    return found


async def settled(count: int) -> list[int]:
    """The prepared sandboxes once there are ``count`` (they start in the background)."""
    for _ in range(200):
        pids = prepared_pids()
        if len(pids) == count:
            return pids
        await asyncio.sleep(0.02)
    return prepared_pids()


@needs_bwrap
@pytest.mark.parametrize(
    "attack",
    [
        pytest.param("echo evil > .git/hooks/pre-commit", id="git-hook-write"),
        pytest.param("echo '[core]' >> .git/config", id="git-config-append"),
        pytest.param("printf x > .git/commondir", id="git-commondir-plant"),
        pytest.param("mkdir -p .tether && echo '{}' > .tether/settings.local.json", id="tether"),
        pytest.param("echo '{}' > .mcp.json", id="mcp-json-create"),
        pytest.param("cat /etc/shadow", id="shadow-read"),
    ],
)
async def test_a_prepared_sandbox_confines_like_a_fresh_one(
    make_harness: MakeHarness, workspace: Path, attack: str
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # noqa: ASYNC221
    before = (workspace / ".git" / "config").read_text()
    h = make_harness(mode="bypassPermissions", linger_s=30)
    try:
        first = await h.call("Bash", command=WHERE)
        assert text_of(first).strip() == "FRESH"
        assert len(await settled(1)) == 1  # the next command's, started as this one ended

        out = await h.call("Bash", command=f"{WHERE}; {attack}")
        assert "PREPARED" in text_of(out).splitlines(), text_of(out)
        assert "root:" not in text_of(out)
        assert (workspace / ".git" / "config").read_text() == before
        assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
        assert not (workspace / ".git" / "commondir").exists()
        assert not (workspace / ".tether").exists() and not (workspace / ".mcp.json").exists()
        if "shadow" not in attack:
            assert "The shell sandbox refused" in text_of(out) or "Read-only" in text_of(out)
    finally:
        sandbox_of(h).close()
    assert await settled(0) == []
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "src"]


@needs_bwrap
async def test_a_prepared_sandbox_serves_one_command_and_only_its_own_layout(
    make_harness: MakeHarness, workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # noqa: ASYNC221
    h = make_harness(mode="bypassPermissions", linger_s=30)
    try:
        assert text_of(await h.call("Bash", command=WHERE)).strip() == "FRESH"
        # Its PID namespace dies with the command: what that one left running is gone.
        out = await h.call("Bash", command=f"{WHERE}; (sleep 30 &) ; echo started")
        assert text_of(out).split() == ["PREPARED", "started"]
        out = await h.call("Bash", command=f"{WHERE}; pgrep -c sleep || true")
        assert text_of(out).split() == ["PREPARED", "0"]

        # Another directory is another layout: the prepared one is not used.
        (workspace / "sub").mkdir()
        h.ctx.cwd = workspace / "sub"
        out = await h.call("Bash", command=f"{WHERE}; pwd")
        assert text_of(out).split() == ["FRESH", str(workspace / "sub")]

        # A protected file replaced on the host since (git rewrites its config by a rename):
        # the mount covered the old file, so the prepared sandbox is not used.
        h.ctx.cwd = workspace
        assert text_of(await h.call("Bash", command=WHERE)).strip() == "FRESH"
        await settled(1)
        config = workspace / ".git" / "config"
        replacement = workspace / ".git" / "config.new"
        replacement.write_text(config.read_text() + "# the user's\n")
        replacement.rename(config)
        out = await h.call("Bash", command=f"{WHERE}; echo '[core]' >> .git/config")
        assert "FRESH" in text_of(out).splitlines(), text_of(out)
        assert config.read_text().endswith("# the user's\n")

        # The user's own settings made since the sandbox was prepared: its mounts do not
        # cover them, so it is not used; they are never writable, whichever runs.
        await settled(1)
        real = workspace / ".claude"
        real.mkdir()
        (real / "settings.json").write_text("{}")
        # truncate(2) is not an open: the gate does not see it, the read-only mount refuses it.
        cut = f"{os.path.realpath(sys.executable)} -c 'import os; os.truncate(\".claude/settings.json\", 0)'"
        out = await h.call("Bash", command=f"{WHERE}; {cut}")
        assert "FRESH" in text_of(out).splitlines(), text_of(out)
        assert "Read-only file system" in text_of(out), text_of(out)
        assert (real / "settings.json").read_text() == "{}"
    finally:
        sandbox_of(h).close()
    assert prepared_pids() == []


@needs_bwrap
async def test_an_unused_prepared_sandbox_ends_and_leaves_no_trace(workspace: Path) -> None:
    from tether.tools.shell import run_shell

    sandbox = BwrapSandbox(workspace, linger_s=0.3)
    with sandbox.session(workspace) as confined:
        result = await run_shell(
            "true",
            cwd=workspace,
            timeout_s=10,
            max_output_chars=1000,
            wrap=confined,
            prepared=confined.prepared,
            pass_fds=confined.pass_fds,
        )
    assert result.exit_code == 0
    assert len(await settled(1)) == 1
    assert sorted(p.name for p in workspace.iterdir()) == ["src"]  # nothing while it waits
    for _ in range(100):
        if not prepared_pids():
            break
        await asyncio.sleep(0.05)
    assert prepared_pids() == []
    assert sorted(p.name for p in workspace.iterdir()) == ["src"]
    sandbox.close()


def runner(sandbox: BwrapSandbox, workspace: Path) -> Callable[[str], Awaitable[str]]:
    """Runs a command in ``sandbox`` as the Bash tool does; returns its output."""
    from tether.tools.shell import run_shell

    async def run(command: str) -> str:
        with sandbox.session(workspace) as confined:
            result = await run_shell(
                command,
                cwd=workspace,
                timeout_s=20,
                max_output_chars=10_000,
                wrap=confined,
                prepared=confined.prepared,
                pass_fds=confined.pass_fds,
            )
        assert result.exit_code == 0, result.output
        return result.output

    return run


@needs_bwrap
async def test_commands_running_at_once_draw_on_a_pool_each_sandbox_serving_one(
    workspace: Path,
) -> None:
    sandbox = BwrapSandbox(workspace, linger_s=30)
    run = runner(sandbox, workspace)
    try:
        outs = await asyncio.gather(*(run(f"{WHERE}; sleep 0.3") for _ in range(3)))
        assert sum(o.split()[0] == "FRESH" for o in outs) >= 1
        # Three ran at once: three are prepared for the next ones, no more.
        ready = await settled(3)
        assert len(ready) == 3
        await asyncio.sleep(0.2)
        assert sorted(prepared_pids()) == sorted(ready)
        outs = await asyncio.gather(*(run(f"{WHERE}; sleep 0.3") for _ in range(3)))
        assert [o.split()[0] for o in outs] == ["PREPARED"] * 3, outs
        # Each served one command: the three it had are gone, three new ones wait.
        again = await settled(3)
        assert len(again) == 3 and not set(again) & set(ready)
    finally:
        sandbox.close()
    assert prepared_pids() == []


@needs_bwrap
async def test_a_sandbox_prepared_before_a_host_change_is_replaced_when_the_command_ends(
    workspace: Path,
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # noqa: ASYNC221
    sandbox = BwrapSandbox(workspace, linger_s=30)
    run = runner(sandbox, workspace)
    config = workspace / ".git" / "config"

    async def host_rewrites_config() -> None:
        await asyncio.sleep(0.15)
        replacement = workspace / ".git" / "config.new"
        replacement.write_text(config.read_text() + "# the user's\n")
        replacement.rename(config)

    try:
        assert (await run(WHERE)).strip() == "FRESH"
        (before,) = await settled(1)
        # The host replaces a file the sandbox covers while a command runs.
        out, _ = await asyncio.gather(run(f"{WHERE}; sleep 0.5"), host_rewrites_config())
        assert out.split()[0] == "PREPARED"
        # The layout that command ran in is not the tree's any more: nothing is prepared
        # from it; the next command makes its own, which covers the new file.
        assert await settled(0) == []
        out = await run(f"{WHERE}; echo '[core]' >> .git/config || true")
        assert out.split()[0] == "FRESH", out
        assert config.read_text().endswith("# the user's\n")
        (after,) = await settled(1)
        assert after != before
    finally:
        sandbox.close()
    assert prepared_pids() == []


@needs_bwrap
async def test_a_host_socket_gone_while_a_command_ran_is_not_made_again(workspace: Path) -> None:
    """A host program's socket in the tree is covered by a mount. The program removes it
    while a command runs (it quits): no sandbox is prepared from the layout the command
    started in, for bubblewrap would make what that layout mounts on (an empty file where
    the socket was, and the program could not listen there again) before any gate runs."""
    (workspace / "run").mkdir()
    path = workspace / "run" / "dev.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    sandbox = BwrapSandbox(workspace, linger_s=30)
    run = runner(sandbox, workspace)

    async def program_quits() -> None:
        await asyncio.sleep(0.2)
        server.close()
        path.unlink()

    try:
        await asyncio.gather(run("sleep 0.6"), program_quits())
        assert await settled(0) == []
        await asyncio.sleep(0.2)  # a sandbox started in the background would have made it
        assert not os.path.lexists(path)
        again = socket.socket(socket.AF_UNIX)
        again.bind(str(path))  # the program starts again
        again.close()
        assert (await run(f"{WHERE}")).strip() == "FRESH"
    finally:
        sandbox.close()
    assert prepared_pids() == []


@needs_bwrap
async def test_a_command_may_not_move_the_folder_of_a_host_socket(workspace: Path) -> None:
    """Moving it away would leave the sandbox's cover of the socket (and of what the
    command put in its place, a link to ``.git/commondir``) to be made again on the host."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # noqa: ASYNC221
    (workspace / "run").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(workspace / "run" / "dev.sock"))
    server.listen()
    sandbox = BwrapSandbox(workspace, linger_s=30)
    run = runner(sandbox, workspace)
    try:
        out = await run(
            "mv run run.old && mkdir run && ln -s ../.git/commondir run/dev.sock; echo tried"
        )
        assert "cannot move" in out, out
        await asyncio.sleep(0.2)
        assert not os.path.lexists(workspace / ".git" / "commondir")
        status = subprocess.run(  # noqa: ASYNC221
            ["git", "-C", str(workspace), "status", "--short"], capture_output=True, text=True
        )
        assert status.returncode == 0, status.stderr
        assert (workspace / "run" / "dev.sock").is_socket()
    finally:
        sandbox.close()
        server.close()
    assert prepared_pids() == []


@needs_bwrap
async def test_a_prepared_sandbox_that_cannot_be_followed_is_not_handed_the_command(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Following it fails (no descriptor left for its pidfd): the command starts afresh,
    and runs once, the prepared gate never having had it."""
    sandbox = BwrapSandbox(workspace, linger_s=30)
    run = runner(sandbox, workspace)
    real = os.pidfd_open
    failed: list[int] = []

    def pidfd_open(pid: int, flags: int = 0) -> int:
        if not failed:
            failed.append(pid)
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return real(pid, flags)

    try:
        assert (await run(WHERE)).strip() == "FRESH"
        (prepared,) = await settled(1)
        monkeypatch.setattr(os, "pidfd_open", pidfd_open)
        out = await run(f"{WHERE}; echo ran >> count.txt")
        monkeypatch.undo()
        assert failed == [prepared] and out.strip() == "FRESH", (failed, out)
        await asyncio.sleep(0.3)  # a command handed to the prepared gate would be done
        assert (workspace / "count.txt").read_text() == "ran\n"
    finally:
        sandbox.close()
    assert prepared_pids() == []
