"""The workspace's shell sandbox: settings in, a bubblewrap argv wrapper out.

Permission rules answer "may this command run"; the sandbox limits what an allowed command
can do (seed 003: the two are complementary, and the sandbox is the hard boundary). Its
configuration is replaced in place when settings change, so the next command uses it.
Each command gets a fresh layout: the control plane as it is on disk now (``protect.py``),
the sensitive paths that exist and the host's sockets (``exposure.py``), and runs under the
gate, which refuses to create what is protected and reports each refusal (``launch.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.core.tool_threads import ToolLane
from tether.network.hosts import Decide
from tether.sandbox.bwrap import Probe, SandboxPolicy, bwrap_argv, probe
from tether.sandbox.doors import Door, DoorFinder, direnv_loads_dotenv, door_key
from tether.sandbox.exposure import Exposure, expand, exposure, listening_sockets, within
from tether.sandbox.gitstore import StoreWatch
from tether.sandbox.launch import Refusals, gate_argv, runtime
from tether.sandbox.mounted import Identities
from tether.sandbox.outbound import CommandProxy, ProxySockets, by_settings
from tether.sandbox.outbound import explain as explain_blocked
from tether.sandbox.prestart import LINGER_S, Demand, PreparedProcess, Prestarter, layout_of
from tether.sandbox.protect import (
    DISCOVERY_TTL_S,
    PACKAGE_NAMES,
    Discovery,
    Plan,
    doors_of,
    plan,
    repositories,
    restore_links,
)
from tether.sandbox.report import explain, undone_note
from tether.settings.model import SandboxSettings
from tether.tools.context import Confined, ShellProcess

log = logging.getLogger(__name__)


class BwrapSandbox:
    """Implements ``tools.context.ShellSandbox`` with bubblewrap."""

    def __init__(
        self,
        root: Path,
        settings: SandboxSettings | None = None,
        *,
        private: Sequence[Path] = (),
        probe_result: Probe | None = None,
        linger_s: float = LINGER_S,
        discovery: Discovery | None = None,
        sockets: Callable[[], list[Path]] = listening_sockets,
        also_readable: Sequence[Path] = (),
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._probe = probe_result or probe()
        self._prestart = Prestarter(linger_s) if linger_s > 0 else None
        """The next commands' sandboxes, started ahead (``prestart.py``), waiting at most
        ``linger_s`` (none when 0)."""
        self._demand = Demand(linger_s)
        """How many commands ran at once lately: how many sandboxes to prepare."""
        self._doors = DoorFinder()
        self._doors_seen: dict[tuple[tuple[str, str], ...], tuple[float, tuple[Door, ...]]] = {}
        self._commands_running = 0
        self._generation = 0
        """Counts commands' starts and ends: doors found across one are not kept."""
        """The doors found last per kind of caller (``door_key``), and when (reused like the
        walk's results)."""
        self._closed = False
        self._private = tuple(Path(os.path.realpath(p)) for p in private)
        self._discovery = discovery or Discovery()
        self._store = StoreWatch()
        """Git's state per repository, to undo doors a command stages or commits."""
        self._sockets = sockets
        self._links: dict[Path, str] = {}
        self._links_lock = threading.Lock()
        self._also_readable = tuple(also_readable)
        self._proxies = ProxySockets()
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
    def session(
        self, cwd: Path, env: Mapping[str, str] | None = None, network: Decide | None = None
    ) -> Generator[Confined]:
        """The command's sandbox; protected links it replaced are put back when it ends.
        ``env``: the variables of the caller it runs for (None: this process's).
        ``network``: who decides which hosts it may reach through the proxy (None: the
        settings' lists alone). The layout is made on the calling thread (``confine``
        makes it off the event loop)."""
        with self._session(self._layout(cwd, env), env, network) as confined:
            yield confined

    @contextlib.asynccontextmanager
    async def confine(
        self,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        network: Decide | None = None,
        *,
        threads: ToolLane,
    ) -> AsyncGenerator[Confined]:
        """``session``, its layout (the walk, the control plane, what is exposed, the host's
        sockets, the bubblewrap command line) made on one of ``threads``: file work that
        would hold every session's event loop for milliseconds. What the command changes
        is seen the same way: the layout is made before the command starts, git's state
        before it is looked at on the loop right before, and a prepared sandbox is checked
        against the files as they are when it is taken."""
        layout = await threads.run(self._layout, cwd, env)
        with self._session(layout, env, network) as confined:
            yield confined

    def _layout(self, cwd: Path, env: Mapping[str, str] | None) -> _Layout:
        """What a command's sandbox is made of, from the tree as it is now (any thread)."""
        # The mounts are made on canonical paths: a link to the workspace may lie where the
        # sandbox sees nothing of the host's (a private ``/tmp``), so ``--chdir`` must not use it.
        cwd = Path(os.path.realpath(cwd))
        policy = self.policy
        roots = (policy.root, *policy.writable)
        found = [self._discovery.found(root) for root in roots]
        protected = plan(
            roots, found, git_writable=policy.git_writable, finder=self._doors, env=env
        )
        seen = exposure(
            policy.root,
            policy.writable,
            hide_home=policy.hide_home,
            readable=policy.readable,
            hidden=policy.hidden,
            sockets=self._sockets(),
        )
        self._store.warm(protected.watched)
        proxy_dir = None if policy.allow_network else self._proxies.directory()
        gate = (*protected.gate, *_kept_in_place(seen, roots))
        layout = _Layout(cwd, policy, roots, protected, seen, gate, proxy_dir, ())
        return layout.with_prefix(self._bwrap_prefix(layout, proxy_dir))

    def _bwrap_prefix(self, layout: _Layout, proxy_dir: Path | None) -> tuple[str, ...]:
        """The bubblewrap command line up to ``--`` (the gate's follows)."""
        return tuple(
            bwrap_argv(
                self._probe.executable or "bwrap",
                layout.policy,
                layout.protected.items,
                [],
                layout.cwd,
                layout.seen,
                no_userns=self._probe.no_userns,
                proxy_dir=proxy_dir,
            )
        )

    @contextlib.contextmanager
    def _session(
        self, layout: _Layout, env: Mapping[str, str] | None, network: Decide | None
    ) -> Generator[Confined]:
        cwd, policy, protected = layout.cwd, layout.policy, layout.protected
        roots = list(layout.roots)
        self.restore_links()
        with self._links_lock:
            self._links.update(protected.links)
        refusals = [Refusals()]
        """The report of the gate that runs the command (a prepared one brings its own)."""
        started: list[tuple[list[str], dict[str, str], int, Identities | None]] = []
        rt = runtime()
        proxy = self._proxy(policy, network, env)
        gate = layout.gate if proxy is None else ("proxy", proxy.inside, *layout.gate)
        proxy_dir = None if proxy is None else self._proxies.directory()
        prefix = layout.prefix
        if proxy_dir != layout.proxy_dir:  # no proxy after all: no network at all
            prefix = self._bwrap_prefix(layout, proxy_dir)

        def wrap(argv: list[str]) -> list[str]:
            return [*prefix, *gate_argv(rt, refusals[0].write_fd, gate, argv)]

        async def prepared(
            argv: list[str], *, env: Mapping[str, str], umask: int
        ) -> ShellProcess | None:
            if self._prestart is None:
                return None
            # What the layout was made from, as the command starts: the next command's
            # sandbox is prepared from this layout only if the command left all of it as it
            # was (bubblewrap makes what a mount needs, following links, before any gate).
            started.append((argv, dict(env), umask, layout_of(argv)))
            self._demand.begin()  # a command waiting for its result (not a background one)
            process = await self._prestart.take(argv, env, umask)
            if isinstance(process, PreparedProcess):
                refusals[0].discard()
                refusals[0] = process.refusals
                follow(process.pid)
            return process

        def follow(pid: int) -> None:
            if proxy is not None:
                proxy.own(pid)

        store = self._store.before(protected.watched)
        undone: list[str] | None = None

        settling = threading.Lock()

        def settle() -> list[str]:
            """Git's state looked at once (``notes`` may run on a thread while a cancelled
            command's session ends)."""
            nonlocal undone
            with settling:
                if undone is None:
                    undone = self._store.after(store)
                return undone

        def notes() -> list[str]:
            lines = settle()
            blocked = explain_blocked(proxy.blocked) if proxy is not None else []
            return [*explain(*refusals[0].collect()), *undone_note(lines), *blocked]

        self._commands_changed(+1)
        try:
            yield Confined(
                wrap, prepared, pass_fds=(refusals[0].write_fd,), notes=notes, started=follow
            )
        finally:
            self._commands_changed(-1)
            settle()
            if proxy is not None:
                proxy.close()
            refusals[0].discard()
            restore_links(protected.links, roots)
            if started:
                self._demand.end()
            if started and self._prestart is not None and not self._closed:
                argv, used_env, umask, expected = started[-1]
                want = self._demand.want()
                self._prestart.prepare(
                    argv, used_env, umask, cwd, want=want, recheck=True, expected=expected
                )

    def _proxy(
        self, policy: SandboxPolicy, network: Decide | None, env: Mapping[str, str] | None
    ) -> CommandProxy | None:
        """The command's filtering proxy, when its network is filtered (no proxy without a
        running event loop to serve it: the command then has no network at all)."""
        if policy.allow_network:
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return None
        lists = self.settings.network
        decide = network or by_settings(lists.allowed_domains, lists.denied_domains)
        try:
            return CommandProxy(self._proxies, decide, os.environ if env is None else env)
        except OSError as e:  # the command still runs, with no network at all
            log.warning("the sandbox's network proxy could not start: %s", e)
            return None

    def door(self, path: Path, env: Mapping[str, str] | None = None) -> str | None:
        """What on the host runs or reads ``path`` (``doors.py``), or None, for the caller
        whose variables are ``env`` (None: this process's)."""
        if path.name.casefold() in PACKAGE_NAMES and within(
            path, [self.policy.root, *self.policy.writable]
        ):
            # At any depth, as for commands (``protect.SANDBOX_NAMES``), made yet or not.
            return f"the package manager runs what it names ({path.name})"
        env = _caller_env(env)
        key = door_key(env)
        now = time.monotonic()
        with self._links_lock:
            # What a command may have made (a virtualenv, a package's configuration) is
            # only known once it has ended: nothing found before it, or while one runs, is
            # kept.
            cached = self._doors_seen.get(key) if self._commands_running == 0 else None
            generation = self._generation
        if cached is None or now - cached[0] >= DISCOVERY_TTL_S:
            roots = [self.policy.root, *self.policy.writable]
            found = [self._discovery.found(root) for root in roots]
            repos = repositories(roots, found)
            dotenv = direnv_loads_dotenv(env)
            doors = doors_of(roots, found, repos, self._doors, dotenv=dotenv, env=env)
            cached = self._remember_doors(key, now, tuple(doors), generation)
        for door in cached[1]:
            if path == door.path or path.is_relative_to(door.path):
                return door.why
        return None

    def _commands_changed(self, by: int) -> None:
        """A command starts (+1) or ends (-1): the doors found before are forgotten."""
        with self._links_lock:
            self._commands_running += by
            self._generation += 1
            self._doors_seen.clear()

    def _remember_doors(
        self,
        key: tuple[tuple[str, str], ...],
        found_at: float,
        doors: tuple[Door, ...],
        generation: int,
    ) -> tuple[float, tuple[Door, ...]]:
        """The doors found for the callers of ``key``, looked for from ``found_at`` on; kept
        only if no command started or ended meanwhile (``generation``)."""
        cached = (found_at, doors)
        with self._links_lock:
            if generation != self._generation:
                return cached
            # Only the callers of the last few minutes: the others' doors are stale.
            for old in [
                k for k, v in self._doors_seen.items() if found_at - v[0] >= DISCOVERY_TTL_S
            ]:
                del self._doors_seen[old]
            seen = self._doors_seen.get(key)
            if seen is None or seen[0] <= found_at:
                self._doors_seen[key] = cached
        return cached

    def restore_links(self) -> list[Path]:
        """Put back protected symlinks a (background) command replaced."""
        with self._links_lock:
            links = list(self._links.items())
        return restore_links(links, [self.policy.root, *self.policy.writable])

    def close(self) -> None:
        """End the prepared sandbox (the workspace is closing)."""
        self._closed = True
        if self._prestart is not None:
            self._prestart.close()
        self._proxies.close()

    # -- configuration ----------------------------------------------------------------------

    def configure(self, settings: SandboxSettings, also_readable: Sequence[Path] = ()) -> None:
        """New settings; ``also_readable``: directories the file tools may use too
        (``permissions.additionalDirectories``), which shell commands may then read."""
        self.settings = settings
        self._also_readable = tuple(also_readable)
        self.policy = self._policy(settings)

    def _policy(self, settings: SandboxSettings) -> SandboxPolicy:
        return SandboxPolicy(
            root=self.root,
            writable=tuple(expand(p, self.root) for p in settings.writable_paths),
            allow_network=settings.allow_network,
            hidden=(*self._private, *(expand(p, self.root) for p in settings.hidden_paths)),
            readable=(
                *(expand(p, self.root) for p in settings.readable_paths),
                *(Path(os.path.realpath(p)) for p in self._also_readable),
            ),
            hide_home=settings.hide_home,
            git_writable=settings.git_writable,
        )

    def describe(self) -> str:
        """One line for the user: what commands can and cannot do."""
        if not self.active:
            return (
                f"Shell sandbox unavailable: {self.problem}. Commands run unsandboxed: one "
                "that is not read-only asks first, except in bypassPermissions mode (it runs "
                "unasked) and dontAsk mode (it is denied)."
            )
        network = (
            "network allowed"
            if self.policy.allow_network
            else "network by host, through a filtering proxy"
        )
        count = len(self.policy.writable)
        extra = f" and {count} extra writable path(s)" if count else ""
        home = "; home directory hidden" if self.policy.hide_home else ""
        return (
            f"Shell sandbox (bubblewrap): writes only inside the workspace{extra}; {network}{home}."
        )


def _caller_env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """The variables of the caller a command runs for (None: this process's)."""
    return os.environ if env is None else env


@dataclass(frozen=True)
class _Layout:
    """What one command's sandbox is made of (``BwrapSandbox._layout``)."""

    cwd: Path
    policy: SandboxPolicy
    roots: tuple[Path, ...]
    protected: Plan
    seen: Exposure
    gate: tuple[str, ...]
    """The gate's policy (without the command's proxy)."""
    proxy_dir: Path | None
    """The directory of proxy sockets ``prefix`` shows (None: none)."""
    prefix: tuple[str, ...]
    """The bubblewrap command line up to ``--``."""

    def with_prefix(self, prefix: tuple[str, ...]) -> _Layout:
        return dataclasses.replace(self, prefix=prefix)


def _kept_in_place(seen: Exposure, roots: Sequence[Path]) -> tuple[str, ...]:
    """What the sandbox hides or covers inside the writable roots, for the gate to keep
    where it is: a hidden file (``hiddenPaths``, a sensitive location) is hidden by its
    path, and a host program's socket covered by its path, so a command may not move the
    folder holding one (the next command would find the file under the new name, or the
    sandbox's cover missing) nor put anything at its place."""
    out: list[str] = []
    for path, why in (
        *(
            (p, "it is hidden from commands (hiddenPaths, or a sensitive location)")
            for p in seen.secret
        ),
        *((p, "a program of the host listens on it") for p in seen.sockets),
    ):
        if any(path.is_relative_to(root) and path != root for root in roots):
            out += ["exact", str(path), why]
    return tuple(out)
