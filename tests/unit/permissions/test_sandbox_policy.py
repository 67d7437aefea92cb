"""The bubblewrap command line and the stand-ins for missing protected paths."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tether.permissions.controlplane import Protected, is_control_plane
from tether.sandbox import BwrapSandbox, Probe
from tether.sandbox.placeholders import Placeholders
from tether.sandbox.protect import plan
from tether.settings.model import SandboxSettings

from .conftest import MISSING, WORKING


def protected_paths(root: Path) -> list[Protected]:
    return list(plan([root], [], git_writable=True).items)


def pairs(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == option]


def test_argv_confines_everything(root: Path) -> None:
    (root / ".git").mkdir()
    sandbox = BwrapSandbox(
        root, SandboxSettings(git_writable=False), probe_result=WORKING, linger_s=0
    )
    with sandbox.session(root) as wrap:
        argv = wrap(["bash", "-c", "true"])
        assert (root / ".tether").is_dir()  # a stand-in while the command runs
    assert not (root / ".tether").exists()
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert "--share-net" not in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--ro-bind") + 1 : argv.index("--ro-bind") + 3] == ["/", "/"]
    assert "/tmp" in pairs(argv, "--tmpfs")
    assert str(root) in pairs(argv, "--bind-try")
    ro = pairs(argv, "--ro-bind")
    for name in (".git", ".tether", ".vscode", ".mcp.json", ".nvim.lua"):
        assert str(root / name) in ro, name
    assert argv[-3:] == ["bash", "-c", "true"]
    # the workspace is bound before the read-only control plane on top of it
    assert argv.index(str(root)) < argv.index(str(root / ".git"))


def test_settings_open_network_and_extra_paths(root: Path, tmp_path: Path) -> None:
    extra = tmp_path / "cache"
    extra.mkdir()
    settings = SandboxSettings(allow_network=True, writable_paths=[str(extra)])
    sandbox = BwrapSandbox(root, settings, probe_result=WORKING)
    with sandbox.session(root) as wrap:
        argv = wrap(["true"])
    assert "--share-net" in argv
    assert str(os.path.realpath(extra)) in pairs(argv, "--bind-try")


def test_git_writable_by_default_keeps_what_git_runs_read_only(root: Path) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("")
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0)
    with sandbox.session(root) as wrap:
        argv = wrap(["true"])
        assert (root / ".git" / "commondir").read_text() == ".\n"  # an inert stand-in
    assert not (root / ".git" / "commondir").exists()
    assert str(root / ".git") in pairs(argv, "--bind")
    ro = pairs(argv, "--ro-bind")
    for name in ("hooks", "config", "info", "commondir", "config.worktree", "modules"):
        assert str(root / ".git" / name) in ro, name


def test_unavailable_sandbox_says_why(root: Path) -> None:
    sandbox = BwrapSandbox(root, probe_result=MISSING)
    assert not sandbox.active and "not installed" in (sandbox.problem or "")
    assert "asks first" in sandbox.describe() and "bypassPermissions" in sandbox.describe()
    off = BwrapSandbox(root, SandboxSettings(enabled=False), probe_result=Probe(True))
    assert not off.active and "turned off" in (off.problem or "")


def test_stand_ins_are_shared_and_only_ours_are_removed(root: Path) -> None:
    holder = Placeholders(linger_s=0)
    items = [p for p in protected_paths(root) if p.path.name in (".tether", ".mcp.json")]
    with holder.hold(items):
        with holder.hold(items):
            assert (root / ".tether").is_dir() and (root / ".mcp.json").is_file()
        assert (root / ".tether").is_dir()  # still held by the outer command
        (root / ".mcp.json").write_text('{"user": "wrote this meanwhile"}')
    assert not (root / ".tether").exists()
    assert (root / ".mcp.json").read_text().startswith('{"user"')
    assert holder.held() == []


def test_control_plane_matching(root: Path) -> None:
    roots = [root]
    for rel in (
        *(".tether/x", ".git/config", ".git/objects/ab", ".vscode", ".TETHER/a", ".mcp.json"),
        *("src/.tether", "sub/repo/.git/hooks/x", "a/.claude/skills/s.md", "b/.envrc"),
    ):
        assert is_control_plane(root / rel, roots), rel
    for rel in ("tether", ".gitignore", ".github/workflows/ci.yml", "src/git/config"):
        assert not is_control_plane(root / rel, roots), rel


def test_a_git_directory_is_protected_by_its_contents_whatever_its_name(root: Path) -> None:
    gitdir = root / "elsewhere"
    (gitdir / "objects").mkdir(parents=True)
    (gitdir / "refs").mkdir()
    (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
    assert is_control_plane(gitdir / "config", [root])
    assert is_control_plane(gitdir / "hooks" / "pre-commit", [root])
    assert not is_control_plane(root / "other" / "config", [root])


def test_stand_ins_linger_briefly_then_go(root: Path) -> None:
    holder = Placeholders(linger_s=60)
    items = [p for p in protected_paths(root) if p.path.name == ".vscode"]
    with holder.hold(items):
        pass
    assert (root / ".vscode").is_dir()  # kept for the next command of the burst
    with holder.hold(items) as now:
        assert now[0].exists
    holder.sweep(0)  # what closing the workspace does
    assert not (root / ".vscode").exists()


def test_one_timer_sweeps_every_stand_in_of_a_burst(root: Path) -> None:
    holder = Placeholders(linger_s=0.2)
    items = protected_paths(root)
    threads = threading.active_count()
    for _ in range(20):
        with holder.hold(items):
            pass
    assert len(holder.held()) > 1
    assert threading.active_count() <= threads + 1  # not a timer per stand-in per command
    deadline = time.monotonic() + 5
    while holder.held() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert holder.held() == []
    assert not (root / ".vscode").exists()


def test_a_lingering_stand_in_is_not_swept_from_under_the_next_command(root: Path) -> None:
    holder = Placeholders(linger_s=60)
    with holder.hold([p for p in protected_paths(root) if p.path.name == ".idea"]):
        pass
    again = [p for p in protected_paths(root) if p.path.name == ".idea"]
    assert again[0].exists  # the stand-in looks like a real directory now
    with holder.hold(again):
        holder.sweep(0)  # a timer from the earlier command fires mid-command
        assert (root / ".idea").is_dir()
    holder.sweep(0)
    assert not (root / ".idea").exists()


def test_the_home_is_hidden_and_toolchains_come_back(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    for rel in (".cargo/bin", ".ssh", ".aws", ".config/gh"):
        (home / rel).mkdir(parents=True)
    (home / ".gitconfig").write_text("")
    (home / ".netrc").write_text("")
    (home / ".nix-profile-target").mkdir()
    (home / ".nix-profile").symlink_to(home / ".nix-profile-target")
    monkeypatch.setenv("HOME", str(home))
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0)
    with sandbox.session(root) as wrap:
        argv = wrap(["true"])
    home = Path(os.path.realpath(home))
    assert str(home) in pairs(argv, "--tmpfs")
    revealed = pairs(argv, "--ro-bind-try")
    assert str(home / ".cargo") in revealed and str(home / ".gitconfig") in revealed
    assert str(home / ".ssh") not in revealed
    links = [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--symlink"]
    assert [str(home / ".nix-profile-target"), str(home / ".nix-profile")] in links
    # the workspace comes back after the home is hidden, the control plane after that
    assert argv.index(str(home)) < argv.index(str(root)) < argv.index(str(root / ".tether"))


def test_sensitive_paths_inside_the_workspace_are_hidden_unless_allowed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(root))  # the workspace is the home directory
    (root / ".ssh").mkdir()
    (root / ".netrc").write_text("")
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0)
    with sandbox.session(root) as wrap:
        argv = wrap(["true"])
    assert str(root) not in pairs(argv, "--tmpfs")  # the home is the workspace: not hidden
    assert str(root / ".ssh") in pairs(argv, "--tmpfs")
    assert ["/dev/null", str(root / ".netrc")] in [
        argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--ro-bind"
    ]
    allowed = BwrapSandbox(
        root, SandboxSettings(readable_paths=["~/.ssh"]), probe_result=WORKING, linger_s=0
    )
    with allowed.session(root) as wrap:
        assert str(root / ".ssh") not in pairs(wrap(["true"]), "--tmpfs")


def test_host_sockets_are_covered_except_the_workspaces_own(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    sockets = [
        Path("/var/lib/daemon.sock"),
        tmp_path / "home" / "agent.sock",  # gone with the home
        Path("/run/user/0/bus"),  # /run is private
        root / "dev.sock",  # the workspace's own
    ]
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0, sockets=lambda: sockets)
    with sandbox.session(root) as wrap:
        argv = wrap(["true"])
    covered = [
        argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == "/dev/null"
    ]
    assert "/var/lib/daemon.sock" in covered
    assert not {str(s) for s in sockets[1:]} & set(covered)


def test_the_sockets_the_kernel_lists_are_read(tmp_path: Path) -> None:
    import socket

    from tether.sandbox.exposure import listening_sockets

    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    try:
        assert Path(os.path.realpath(path)) in listening_sockets()
    finally:
        server.close()
    assert Path(os.path.realpath(path)) not in listening_sockets()  # unlisted once closed
