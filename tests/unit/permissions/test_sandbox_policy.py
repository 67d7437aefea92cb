"""The bubblewrap command line, and the gate's policy for what does not exist."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from tether.core.tool_threads import ToolThreads
from tether.permissions.controlplane import Protected, is_control_plane
from tether.sandbox import BwrapSandbox, Probe
from tether.sandbox.bwrap import PROXY_DIR
from tether.sandbox.exposure import within
from tether.sandbox.gate.policy import Policy
from tether.sandbox.launch import split_gate
from tether.sandbox.protect import plan
from tether.settings.model import SandboxSettings

from .conftest import MISSING, WORKING


def protected_paths(root: Path) -> list[Protected]:
    return list(plan([root], [], git_writable=True).items)


def gate_policy(argv: list[str]) -> Policy:
    parts = split_gate(argv)
    assert parts is not None, argv
    policy, rest = Policy.parse([*parts[1], "--"])
    assert rest == []
    return policy


def gate_words(argv: list[str]) -> list[str]:
    parts = split_gate(argv)
    assert parts is not None, argv
    return list(parts[1])


def pairs(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == option]


def test_argv_confines_everything(root: Path) -> None:
    (root / ".git").mkdir()
    sandbox = BwrapSandbox(
        root, SandboxSettings(git_writable=False), probe_result=WORKING, linger_s=0
    )
    (root / ".vscode").mkdir()
    (root / ".mcp.json").write_text("{}")
    with sandbox.session(root) as wrap:
        argv = wrap(["bash", "-c", "true"])
        assert sorted(p.name for p in root.iterdir()) == [".git", ".mcp.json", ".vscode"]
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert "--share-net" not in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--ro-bind") + 1 : argv.index("--ro-bind") + 3] == ["/", "/"]
    assert "/tmp" in pairs(argv, "--tmpfs")
    assert str(root) in pairs(argv, "--bind-try")
    ro = pairs(argv, "--ro-bind")
    for name in (".git", ".vscode", ".mcp.json"):
        assert str(root / name) in ro, name
    for name in (".tether", ".nvim.lua"):  # missing: the gate refuses them, nothing is bound
        assert str(root / name) not in ro, name
    assert argv[-3:] == ["bash", "-c", "true"]
    policy = gate_policy(argv)
    assert policy.roots == [str(root)] and policy.gitdirs == []  # gitWritable: false
    assert {".git", ".tether", ".nvim.lua", ".envrc"} <= policy.names
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
    assert not (root / ".git" / "commondir").exists()
    assert str(root / ".git") in pairs(argv, "--bind")
    ro = pairs(argv, "--ro-bind")
    for name in ("hooks", "config"):
        assert str(root / ".git" / name) in ro, name
    for name in ("info", "commondir", "config.worktree", "modules"):
        assert str(root / ".git" / name) not in ro, name  # missing: refused by the gate
    policy = gate_policy(argv)
    assert policy.gitdirs == [str(root / ".git")]
    assert {"config", "hooks", "info", "commondir", "modules"} <= policy.locked


def test_unavailable_sandbox_says_why(root: Path) -> None:
    sandbox = BwrapSandbox(root, probe_result=MISSING)
    assert not sandbox.active and "not installed" in (sandbox.problem or "")
    assert "asks first" in sandbox.describe() and "bypassPermissions" in sandbox.describe()
    off = BwrapSandbox(root, SandboxSettings(enabled=False), probe_result=Probe(True))
    assert not off.active and "turned off" in (off.problem or "")


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
    (root / ".tether").mkdir()
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


def test_host_sockets_are_covered_in_the_workspace_too(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    sockets = [
        Path("/var/lib/daemon.sock"),
        tmp_path / "home" / "agent.sock",  # gone with the home
        Path("/run/user/0/bus"),  # /run is private
        root / "dev.sock",  # a host daemon's (the table lists the host's only)
    ]
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0, sockets=lambda: sockets)
    with sandbox.session(root) as wrap:
        argv = wrap(["true"])
    covered = [
        argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == "/dev/null"
    ]
    assert {"/var/lib/daemon.sock", str(root / "dev.sock")} <= set(covered)
    assert not {str(s) for s in sockets[1:3]} & set(covered)


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


def test_the_gate_policy_survives_any_path_and_reason() -> None:
    from tether.sandbox.launch import gate_argv, runtime

    tokens = Policy.encode(
        ["/w/--", "/w/root"],
        ["/w/--/.git"],
        [("/w/--/hooks", "--"), ("/w/x y", "exact")],
        [".git", "--"],
        ["config"],
        ["/w/--/.git/config", "root"],
    )
    argv = ["bwrap", "--", *gate_argv(runtime(), 7, tokens, ["bash", "-c", "echo -- root"])]
    parts = split_gate(argv)
    assert parts == (["bwrap", "--"], tokens, ["bash", "-c", "echo -- root"])
    policy, command = Policy.parse([*tokens, "--", "bash"])
    assert command == ["bash"] and policy.roots == ["/w/--", "/w/root"]
    assert policy.exact == {"/w/--/hooks": "--", "/w/x y": "exact"}
    assert policy.names == {".git", "--"} and policy.bound == {"/w/--/.git/config", "root"}
    assert policy.ancestors == {}  # the roots themselves are never ancestors to refuse


def test_a_kernel_the_gate_cannot_use_makes_the_sandbox_unavailable(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.sandbox import bwrap

    monkeypatch.setattr(
        bwrap, "supported", lambda: "the shell sandbox's gate does not support mips"
    )
    found = bwrap.probe.__wrapped__("bwrap")  # uncached
    if found.problem and "bubblewrap" in found.problem:
        pytest.skip(found.problem)  # no bwrap at all: covered by the security suite's switch
    assert not found.available and "mips" in (found.problem or "")
    sandbox = BwrapSandbox(root, probe_result=found)
    assert "mips" in sandbox.describe() and "asks first" in sandbox.describe()


async def test_confine_makes_the_layout_off_the_loop_as_session_makes_it(root: Path) -> None:
    """A command on an event loop gets its layout made on a tool thread (walking the tree,
    reading the host's sockets and configuration would hold every session's loop), and the
    very command line ``session`` makes on the calling thread."""
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".vscode").mkdir()
    looked: list[threading.Thread] = []

    def sockets() -> list[Path]:
        looked.append(threading.current_thread())
        return []

    settings = SandboxSettings(allow_network=True)  # no proxy: nothing differs by command
    sandbox = BwrapSandbox(root, settings, probe_result=WORKING, linger_s=0, sockets=sockets)
    async with sandbox.confine(root, threads=ToolThreads().lane()) as wrap:
        confined = wrap(["bash", "-c", "true"])
    assert looked and looked[-1] is not threading.current_thread()
    with sandbox.session(root) as wrap:
        made_here = wrap(["bash", "-c", "true"])
    assert looked[-1] is threading.current_thread()
    assert confined == made_here
    assert str(root / ".git" / "hooks") in pairs(confined, "--ro-bind")


async def test_confine_with_a_filtered_network_shows_the_proxy_sockets(root: Path) -> None:
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0)
    try:
        async with sandbox.confine(root, threads=ToolThreads().lane()) as wrap:
            argv = wrap(["true"])
        assert PROXY_DIR.as_posix() in argv and "--share-net" not in argv
        assert gate_words(argv)[:1] == ["proxy"]

        # Without a loop to serve a proxy the command has no network at all, and no sockets.
        def without_loop() -> list[str]:
            with sandbox.session(root) as wrap:
                return wrap(["true"])

        unserved = await asyncio.to_thread(without_loop)
        assert PROXY_DIR.as_posix() not in unserved and "proxy" not in gate_words(unserved)
    finally:
        sandbox.close()


def test_within_is_is_relative_to_by_text() -> None:
    """The layout's test of "this path is in that root" on text answers as pathlib does."""
    paths = ["/", "/ws", "/ws/a", "/ws2", "/ws2/a", "/w", "//ws/a", "//", "/ws/../x", "ws/a", "ws"]
    for a in paths:
        for b in paths:
            path, root = Path(a), Path(b)
            assert within(path, [root]) == (path == root or path.is_relative_to(root)), (a, b)
    assert within(Path("/ws/a"), [Path("/x"), Path("/ws")]) and not within(Path("/a"), [])


def test_doors_found_before_a_command_are_looked_for_again_after_it(root: Path) -> None:
    """A command may make a door (a virtualenv whose ``activate`` the user's shell sources):
    what the file tools' check found before it, or while it ran, is not kept past it."""
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0)
    activate = root / ".venv" / "bin" / "activate"
    assert sandbox.door(activate) is None  # found, and kept for a few seconds
    with sandbox.session(root):  # the command makes a virtualenv
        activate.parent.mkdir(parents=True)
        (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
        activate.write_text("# activate\n")
        assert sandbox.door(activate) is not None  # looked for afresh while it runs
    assert sandbox.door(activate) is not None


@pytest.mark.parametrize(
    "name",
    ["evil.code-workspace", ".npmrc", ".envrc", ".vscode/tasks.json", ".pre-commit-config.yaml"],
)
def test_a_fifo_or_a_device_where_a_door_is_read_blocks_nothing(root: Path, name: str) -> None:
    """A command can leave a FIFO (or a link to ``/dev/zero``) where the doors are read
    from: the layout and the file tools' check read regular files only, and only so much."""
    planted = root / name
    planted.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(planted)
    (root / "zero.code-workspace").symlink_to("/dev/zero")
    sandbox = BwrapSandbox(root, probe_result=WORKING, linger_s=0)
    answers: list[str | None] = []
    finished = threading.Event()

    def look() -> None:
        answers.append(sandbox.door(root / "src" / "a.py"))
        with sandbox.session(root):  # the layout reads them too
            pass
        finished.set()

    threading.Thread(target=look, daemon=True).start()  # a hang must not hold the tests
    assert finished.wait(20), "reading a FIFO or a device blocked"
    assert answers == [None]
