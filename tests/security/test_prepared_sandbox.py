"""The sandbox prepared for the next command while the model thinks
(``sandbox/prestart.py``) confines exactly as a fresh one: it serves a command only when that
command's own layout, directory and environment are the same, it never serves two commands,
and what it held goes away with it."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from tether.sandbox import BwrapSandbox

from .conftest import Harness, MakeHarness, needs_bwrap, text_of

MARK = "tether_command"
"""In the command line of a prepared sandbox's bubblewrap (its stub reads the command)."""
WHERE = (
    "if tr '\\0' ' ' </proc/1/cmdline | grep -q tether_''command; "
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
        if ppid == str(os.getpid()) and MARK.encode() in cmdline:
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
        commondir = workspace / ".git" / "commondir"  # a held stand-in, or nothing
        assert not commondir.exists() or commondir.read_text() != "x"
        assert list((workspace / ".tether").iterdir()) == []  # the held stand-in, empty
        assert (workspace / ".mcp.json").read_bytes() == b""
    finally:
        sandbox_of(h).close()
    # Closed: no prepared sandbox is left, and every stand-in is gone.
    assert await settled(0) == []
    assert not (workspace / ".tether").exists() and not (workspace / ".mcp.json").exists()


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

        # The user's own settings where a stand-in was: never writable, whichever runs it.
        await settled(1)
        (workspace / ".claude").rmdir()  # our stand-in: the user's real one takes its place
        real = workspace / ".claude"
        real.mkdir()
        (real / "settings.json").write_text("{}")
        out = await h.call("Bash", command="echo x > .claude/settings.json")
        assert "Read-only file system" in text_of(out), text_of(out)
        assert (real / "settings.json").read_text() == "{}"
    finally:
        sandbox_of(h).close()
    assert prepared_pids() == []


@needs_bwrap
async def test_an_unused_prepared_sandbox_ends_and_lets_its_stand_ins_go(workspace: Path) -> None:
    from tether.tools.shell import run_shell

    sandbox = BwrapSandbox(workspace, linger_s=0.3)
    with sandbox.session(workspace) as confined:
        result = await run_shell(
            "true",
            cwd=workspace,
            timeout_s=10,
            max_output_chars=1000,
            wrap=confined,
            prepared=getattr(confined, "prepared", None),
        )
    assert result.exit_code == 0
    assert len(await settled(1)) == 1 and (workspace / ".tether").is_dir()
    for _ in range(100):
        if not prepared_pids() and not (workspace / ".tether").exists():
            break
        await asyncio.sleep(0.05)
    assert prepared_pids() == []
    assert not (workspace / ".tether").exists() and not (workspace / ".mcp.json").exists()
    sandbox.close()
