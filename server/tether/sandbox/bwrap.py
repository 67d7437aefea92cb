"""The bubblewrap command line for one sandboxed shell command, and whether bwrap works.

Inside, in the order the mounts are stacked:

1. the whole filesystem read-only; fresh ``/dev`` and ``/proc``; a private ``/tmp`` and
   ``/run`` (the host's sockets live there);
2. the home directory replaced by an empty one, toolchains and ``readablePaths`` bound
   back read-only (``exposure.py``);
3. the workspace and ``writablePaths`` read-write;
4. the control plane that exists read-only on top of the writable paths (``protect.py``);
5. sensitive locations hidden again wherever they are, host sockets covered, and the
   gate's interpreter and sources wherever they are writable or hidden.

The command runs under the gate (``gate/``), which refuses to bring a protected path into
existence: a mount can only cover something that exists, and whatever bubblewrap mounts on
a missing name it first creates on the host.

Every namespace is unshared — network too unless settings allow it — so the command sees
only loopback and its own processes (its HTTP(S) and SOCKS traffic goes through the daemon's
filtering proxy, whose socket is bound in: ``tether.network``), and cannot make user
namespaces of its own (``--disable-userns``, where bubblewrap has it). All capabilities are
dropped, which matters when the daemon runs as root: without CAP_SYS_ADMIN, ``mount -o
remount,rw`` fails, and bwrap's read-only mounts are locked besides. ``--die-with-parent``
ends the sandbox with the daemon; ``--new-session`` detaches it from any terminal (no
TIOCSTI keystroke injection).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tether.permissions.controlplane import Protected
from tether.sandbox.exposure import Exposure, within
from tether.sandbox.launch import GATE_PACKAGE, gate_argv, runtime, supported

PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed command may touch, translated from settings."""

    root: Path
    """The workspace root (canonical)."""
    writable: tuple[Path, ...] = ()
    """Extra read-write paths (settings ``sandbox.writablePaths``), canonical."""
    allow_network: bool = False
    hidden: tuple[Path, ...] = field(default_factory=tuple)
    """Paths hidden besides the built-in sensitive list (settings ``hiddenPaths`` and
    Tether's own configuration and data), canonical."""
    readable: tuple[Path, ...] = ()
    """Paths readable although hidden (settings ``readablePaths``), canonical."""
    hide_home: bool = True
    git_writable: bool = True


@dataclass(frozen=True)
class Probe:
    available: bool
    problem: str | None = None
    executable: str | None = None
    no_userns: bool = False
    """bubblewrap can forbid user namespaces inside (``--disable-userns``, 0.8)."""


PROXY_DIR = Path("/tmp/.tether-network")
"""Where the sandbox sees the sockets of the daemon's network proxy (``tether.network``)."""
PRIVATE = (Path("/tmp"), Path("/run"), Path("/dev"))
"""Replaced by an empty ``tmpfs`` inside: what lies there must be bound back."""
NO_USERNS = ["--unshare-user", "--disable-userns"]
GATE_PROBE = (
    "mkdir -p /tmp/tether-probe/ok && ! mkdir /tmp/tether-probe/.git 2>/dev/null"
    " && test -d /tmp/tether-probe/ok && ! test -e /tmp/tether-probe/.git"
)
"""Run under the gate: an ordinary directory is made, a protected one refused."""


def _run(argv: list[str]) -> str | None:
    """None if ``argv`` succeeds, else what went wrong."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return detail[-1] if detail else f"exit code {done.returncode}"
    return None


@lru_cache(maxsize=4)
def probe(executable: str = "bwrap") -> Probe:
    """Does bubblewrap run here with the options we need, and does the gate work in it?
    (Once per process.)"""
    found = shutil.which(executable)
    if found is None:
        return Probe(False, "bubblewrap (bwrap) is not installed")
    argv = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    problem = _run([*argv, "--", "true"])
    if problem is not None:
        return Probe(False, f"bubblewrap does not work here ({problem})")
    no_userns = _run([*argv, *NO_USERNS, "--", "true"]) is None
    if no_userns:
        argv += NO_USERNS
    unsupported = supported()
    if unsupported is not None:
        return Probe(False, unsupported)
    root = ["root", "/tmp/tether-probe", "name", ".git"]
    gate = gate_argv(runtime(), None, root, ["bash", "-c", GATE_PROBE])
    problem = _run([*argv, *_runtime_binds(), "--", *gate])
    if problem is not None:
        rt = runtime()
        starts = [
            rt.interpreter,
            "-I",
            "-S",
            "-c",
            rt.boot.split("; from ")[0] + "; import gate.main",
        ]
        unseen = _run([*argv, *_runtime_binds(), "--", *starts])
        if unseen is not None:
            return Probe(
                False,
                f"the sandbox cannot start its gate ({rt.interpreter} with the sources in "
                f"{GATE_PACKAGE}): {unseen}; install Tether where the sandbox shows it "
                "(not under a hidden or private directory)",
            )
        return Probe(
            False,
            "the kernel does not let the sandbox guard protected names (seccomp user "
            f"notification, Linux 5.14 or later): {problem}",
        )
    return Probe(True, executable=found, no_userns=no_userns)


def _runtime_binds(hidden: Sequence[Path] = (), writable: Sequence[Path] = ()) -> list[str]:
    """The gate's interpreter and sources, read-only where they would be hidden (the home, a
    private ``/tmp``, ``/run`` or ``/dev/shm``) or writable (elsewhere the read-only root
    shows them)."""
    out: list[str] = []
    for path in runtime().paths:
        if within(path, (*PRIVATE, *hidden, *writable)):
            out += ["--ro-bind", str(path), str(path)]
    return out


def _hide(path: Path) -> list[str]:
    if path.is_dir() and not path.is_symlink():
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def bwrap_argv(
    executable: str,
    policy: SandboxPolicy,
    protected: Sequence[Protected],
    argv: Sequence[str],
    cwd: Path,
    exposure: Exposure | None = None,
    *,
    no_userns: bool = False,
    proxy_dir: Path | None = None,
) -> list[str]:
    """The full command line: bwrap, its options, then ``argv`` (the gate's command line).
    ``proxy_dir``: the daemon's directory of proxy sockets, shown at ``PROXY_DIR``."""
    seen = exposure or Exposure()
    out = [executable, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    out += ["--tmpfs", "/tmp"]
    if Path("/run").is_dir() and not Path("/run").is_symlink():
        out += ["--tmpfs", "/run"]
        resolver = Path("/run/systemd/resolve")
        if policy.allow_network and resolver.is_dir():
            out += ["--ro-bind", str(resolver), str(resolver)]  # /etc/resolv.conf points here
    for path in seen.hide:
        out += ["--tmpfs", str(path)]
    for path in seen.reveal:
        out += ["--ro-bind-try", str(path), str(path)]
    for link, target in seen.links:
        out += ["--symlink", str(target), str(link)]
    for path in (*policy.writable, policy.root):
        out += ["--bind-try", str(path), str(path)]
    for item in protected:
        if not item.exists or item.path.is_symlink():
            continue  # a symlink cannot be bound without following it (protect.py)
        option = "--bind" if item.writable_mount else "--ro-bind"
        out += [option, str(item.path), str(item.path)]
    # After the control plane: a protected folder (``~/.config`` in a home opened as the
    # workspace) bound again must not show what is hidden inside it.
    for path in seen.secret:
        out += _hide(path)
    for path in seen.sockets:
        out += ["--ro-bind", "/dev/null", str(path)]
    out += _runtime_binds(seen.hide, (*policy.writable, policy.root))
    if proxy_dir is not None and not policy.allow_network:
        out += ["--ro-bind", str(proxy_dir), str(PROXY_DIR)]
    out += ["--unshare-all"]
    if no_userns:
        out += NO_USERNS
    if policy.allow_network:
        out += ["--share-net"]
    out += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    # The workspace is a mount point inside: let git look past it for an enclosing repo.
    out += ["--setenv", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "1", "--setenv", "TMPDIR", "/tmp"]
    # `git status` and friends read without refreshing the index (a read changes nothing).
    out += ["--setenv", "GIT_OPTIONAL_LOCKS", "0"]
    out += ["--chdir", str(cwd), "--", *argv]
    return out
