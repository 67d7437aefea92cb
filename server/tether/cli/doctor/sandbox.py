"""Does the shell sandbox run here, and if not, why: bubblewrap missing, user namespaces
turned off (Debian's ``kernel.unprivileged_userns_clone``, ``user.max_user_namespaces``) or
restricted by AppArmor (Ubuntu 23.10 and later:
``kernel.apparmor_restrict_unprivileged_userns``), a container, WSL 1, or another OS."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from tether.cli.doctor.report import Finding
from tether.sandbox import Probe

AREA = "sandbox"
UNSANDBOXED = (
    "commands run unsandboxed: each one that is not read-only asks first "
    "(bypassPermissions runs it unasked, dontAsk denies it)"
)
APPARMOR_FIX = (
    "allow bwrap alone to create user namespaces with an AppArmor profile: write "
    "/etc/apparmor.d/bwrap containing `abi <abi/4.0>, include <tunables/global> "
    "profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }` and run "
    "`sudo systemctl reload apparmor` (or, for every program: "
    "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`)"
)


@dataclass(frozen=True)
class HostFacts:
    """What decides whether bubblewrap can run, read from ``/proc`` (tests pass their own)."""

    platform: str
    apparmor_restrict_userns: int | None = None
    unprivileged_userns_clone: int | None = None
    max_user_namespaces: int | None = None
    kernel_release: str = ""
    in_container: bool = False

    @property
    def wsl(self) -> int | None:
        """1 or 2 under WSL, else None."""
        release = self.kernel_release.lower()
        if "microsoft" not in release:
            return None
        return 2 if "wsl2" in release or "microsoft-standard" in release else 1


def _number(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def read_host(proc: Path = Path("/proc"), root: Path = Path("/")) -> HostFacts:
    try:
        release = (proc / "sys" / "kernel" / "osrelease").read_text().strip()
    except OSError:
        release = ""
    return HostFacts(
        platform=sys.platform,
        apparmor_restrict_userns=_number(proc / "sys/kernel/apparmor_restrict_unprivileged_userns"),
        unprivileged_userns_clone=_number(proc / "sys/kernel/unprivileged_userns_clone"),
        max_user_namespaces=_number(proc / "sys/user/max_user_namespaces"),
        kernel_release=release,
        in_container=(root / ".dockerenv").exists() or (root / "run/.containerenv").exists(),
    )


def check_sandbox(
    probe: Probe, host: HostFacts, *, enabled: bool, enabled_origin: str | None
) -> Finding:
    """``enabled``: the ``sandbox.enabled`` setting in force (``enabled_origin``: its file)."""
    if not host.platform.startswith("linux"):
        return _other_os(host.platform)
    if not enabled:
        where = f" ({enabled_origin})" if enabled_origin else ""
        return Finding(
            AREA,
            "warn",
            f"turned off in settings{where}: {UNSANDBOXED}",
            fix="remove sandbox.enabled: false to turn it back on",
        )
    if probe.available:
        detail = f"{probe.executable}: no network, writes only inside the workspace, home hidden"
        return Finding(AREA, "ok", "bubblewrap works", (detail,))
    if shutil.which("bwrap") is None:
        return Finding(
            AREA,
            "warn",
            f"bubblewrap (bwrap) is not installed: {UNSANDBOXED}",
            fix="install it: `sudo apt install bubblewrap` (Debian, Ubuntu), "
            "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)",
        )
    return _blocked(probe.problem or "bubblewrap does not run", host)


def _blocked(problem: str, host: HostFacts) -> Finding:
    """bwrap is there but cannot make its namespaces: say which switch is off."""
    said = (problem,)
    if host.apparmor_restrict_userns == 1 and os.geteuid() != 0:
        why = "AppArmor restricts unprivileged user namespaces"
        why += " (kernel.apparmor_restrict_unprivileged_userns = 1)"
        return Finding(AREA, "warn", f"{why}: {UNSANDBOXED}", said, APPARMOR_FIX)
    if host.unprivileged_userns_clone == 0:
        why = "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)"
        fix = "`sudo sysctl kernel.unprivileged_userns_clone=1` (and in /etc/sysctl.d/ to keep it)"
        return Finding(AREA, "warn", f"{why}: {UNSANDBOXED}", said, fix)
    if host.max_user_namespaces == 0:
        why = "user namespaces are off (user.max_user_namespaces = 0)"
        fix = "`sudo sysctl user.max_user_namespaces=15000` (and in /etc/sysctl.d/ to keep it)"
        return Finding(AREA, "warn", f"{why}: {UNSANDBOXED}", said, fix)
    if host.wsl == 1:
        fix = "use WSL 2 (`wsl --set-version <distro> 2`): WSL 1 has no user namespaces"
        return Finding(AREA, "warn", f"WSL 1: {UNSANDBOXED}", said, fix)
    if host.in_container:
        why = "inside a container that does not allow user namespaces"
        fix = "run the container with user namespaces allowed (e.g. a seccomp profile that "
        fix += "permits unshare), or run Tether on the host"
        return Finding(AREA, "warn", f"{why}: {UNSANDBOXED}", said, fix)
    return Finding(AREA, "warn", f"bubblewrap does not run: {UNSANDBOXED}", said)


def _other_os(platform: str) -> Finding:
    if platform == "darwin":
        summary = f"macOS has no bubblewrap (the sandbox is Linux-only): {UNSANDBOXED}"
        return Finding(AREA, "info", summary)
    return Finding(
        AREA,
        "warn",
        f"{platform}: Tether runs on Linux and macOS; on Windows, run it inside WSL 2",
    )
