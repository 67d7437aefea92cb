"""The workspace's shell sandbox: settings in, a bubblewrap argv wrapper out.

Permission rules answer "may this command run"; the sandbox limits what an allowed command
can do (seed 003: the two are complementary, and the sandbox is the hard boundary). Its
configuration is replaced in place when settings change, so the next command uses it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from pathlib import Path

from tether.permissions.controlplane import protected_paths
from tether.sandbox.bwrap import Probe, SandboxPolicy, bwrap_argv, probe
from tether.sandbox.placeholders import LINGER_S, Placeholders
from tether.settings.model import SandboxSettings
from tether.tools.context import Wrap


class BwrapSandbox:
    """Implements ``tools.context.ShellSandbox`` with bubblewrap."""

    def __init__(
        self,
        root: Path,
        settings: SandboxSettings | None = None,
        *,
        read_only: tuple[Path, ...] = (),
        probe_result: Probe | None = None,
        linger_s: float = LINGER_S,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._probe = probe_result or probe()
        self._placeholders = Placeholders(linger_s)
        self._read_only = read_only
        self.settings = settings or SandboxSettings()
        self.policy = self._policy(self.settings)

    # -- ShellSandbox ------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.settings.enabled and self._probe.available

    @property
    def problem(self) -> str | None:
        if not self.settings.enabled:
            return "the sandbox is turned off in settings"
        return self._probe.problem

    @contextlib.contextmanager
    def session(self, cwd: Path) -> Generator[Wrap]:
        """Stand-ins for missing protected paths live exactly as long as the command."""
        policy = self.policy
        git_writable = self.settings.git_writable
        items = [
            item
            for root in (policy.root, *policy.writable)
            for item in protected_paths(root, git_writable=git_writable)
        ]
        executable = self._probe.executable or "bwrap"
        with self._placeholders.hold(items) as now:

            def wrap(argv: list[str]) -> list[str]:
                return bwrap_argv(executable, policy, now, argv, cwd)

            yield wrap

    def close(self) -> None:
        """Remove every stand-in now (the workspace is closing)."""
        self._placeholders.sweep(0)

    # -- configuration ----------------------------------------------------------------------

    def configure(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self.policy = self._policy(settings)

    def _policy(self, settings: SandboxSettings) -> SandboxPolicy:
        writable: list[Path] = []
        for raw in settings.writable_paths:
            path = Path(os.path.expanduser(raw))
            path = path if path.is_absolute() else self.root / path
            writable.append(Path(os.path.realpath(path)))
        return SandboxPolicy(
            root=self.root,
            writable=tuple(writable),
            allow_network=settings.allow_network,
            read_only=tuple(Path(os.path.realpath(p)) for p in self._read_only),
        )

    def describe(self) -> str:
        """One line for the user: what commands can and cannot do."""
        if not self.active:
            return (
                f"Shell sandbox unavailable: {self.problem}. Every command that is not "
                "read-only will need your approval."
            )
        network = "network allowed" if self.policy.allow_network else "no network"
        count = len(self.policy.writable)
        extra = f" and {count} extra writable path(s)" if count else ""
        return f"Shell sandbox (bubblewrap): writes only inside the workspace{extra}; {network}."
