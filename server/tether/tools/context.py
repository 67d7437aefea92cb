"""What a tool call can see and touch: the run state shared by the tools of one session."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tether.core.environ import Caller, expand_home
from tether.core.tool_threads import ToolLane, shared_pool
from tether.editor.port import Document, Editor, PermissionReply
from tether.network.hosts import Decide
from tether.protocol.updates import Mode, PlanEntry, SessionUpdate
from tether.web.cache import TtlCache
from tether.web.page import Page

if TYPE_CHECKING:
    from tether.tasks.registry import TaskRegistry


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class ReadRecord:
    """What the agent saw when it last read (or wrote) a file."""

    hash: str
    version: int | None
    partial: bool
    unconfirmed: bool = False
    """The agent's last write of the file has an unknown outcome (the editor took the edit
    but never showed it): the file must be read again before it is written again."""


class FileState:
    """The files the agent has read, with a content hash, so edits can detect changes.
    Only hashes are kept: the agent's view of a file lives in the conversation."""

    def __init__(self) -> None:
        self._records: dict[Path, ReadRecord] = {}
        self.changed = False
        """Set on every change; the engine snapshots the state into the transcript."""

    def record(self, doc: Document, *, partial: bool = False) -> None:
        self._records[doc.path] = ReadRecord(text_hash(doc.text), doc.version, partial)
        self.changed = True

    def record_hash(self, path: Path, digest: str, *, partial: bool) -> None:
        """A read of the file on disk whose whole text hashes to ``digest``."""
        self._records[path] = ReadRecord(digest, None, partial)
        self.changed = True

    def mark_unconfirmed(self, path: Path) -> None:
        """The write just made to ``path`` may or may not have landed: until the agent reads
        the file again, nothing it remembers of it can be trusted."""
        previous = self._records.get(path)
        partial = previous.partial if previous is not None else False
        self._records[path] = ReadRecord("", None, partial, unconfirmed=True)
        self.changed = True

    def snapshot(self) -> dict[str, dict[str, object]]:
        out: dict[str, dict[str, object]] = {}
        for path, r in self._records.items():
            entry: dict[str, object] = {"hash": r.hash, "partial": r.partial}
            if r.unconfirmed:
                entry["unconfirmed"] = True
            out[str(path)] = entry
        return out

    def restore(self, snapshot: dict[str, dict[str, object]]) -> None:
        for path, entry in snapshot.items():
            self._records[Path(path)] = ReadRecord(
                str(entry.get("hash", "")),
                None,
                bool(entry.get("partial", False)),
                unconfirmed=bool(entry.get("unconfirmed", False)),
            )

    def get(self, path: Path) -> ReadRecord | None:
        return self._records.get(path)

    def forget(self, path: Path) -> None:
        self._records.pop(path, None)
        self.changed = True

    def paths(self) -> list[Path]:
        return list(self._records)

    def clear(self) -> None:
        self._records.clear()
        self.changed = True


Wrap = Callable[[list[str]], list[str]]
"""Transforms a command's argv before it runs (the sandbox wraps it in bubblewrap)."""


class ShellProcess(Protocol):
    """A running shell command: what the shell runner uses of ``asyncio.subprocess.Process``."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...


class PreparedStart(Protocol):
    async def __call__(
        self, argv: list[str], *, env: Mapping[str, str], umask: int
    ) -> ShellProcess | None:
        """A process already running exactly ``argv`` with ``env`` and ``umask`` (a sandbox
        prepared while the model was thinking), its output on a pipe; None: start it the
        usual way."""
        ...


def _no_notes() -> list[str]:
    return []


def _not_followed(pid: int) -> None:
    pass


@dataclass(frozen=True)
class Confined:
    """What a sandbox session gives a command: the argv wrapper, and the start of a sandbox
    prepared ahead, when there may be one."""

    wrap: Wrap
    prepared: PreparedStart | None = None
    pass_fds: tuple[int, ...] = ()
    """Descriptors the wrapped command inherits (the sandbox's report pipe)."""
    notes: Callable[[], list[str]] = _no_notes
    """After the command: what the sandbox refused it, for the model (once)."""
    started: Callable[[int], None] = _not_followed
    """The pid of the wrapped command's process once spawned (the network proxy serves its
    processes only)."""

    def __call__(self, argv: list[str]) -> list[str]:
        return self.wrap(argv)


class ShellSandbox(Protocol):
    """Confines shell commands (tether.sandbox provides the bubblewrap one)."""

    @property
    def active(self) -> bool:
        """True when commands really run confined."""
        ...

    @property
    def problem(self) -> str | None:
        """Why the sandbox is not active, for the user."""
        ...

    def session(
        self, cwd: Path, env: Mapping[str, str] | None = None, network: Decide | None = None
    ) -> AbstractContextManager[Wrap]:
        """Prepare the filesystem for one command; yields the argv wrapper. ``env``: the
        variables of the caller it runs for (None: this process's); ``network``: who
        decides the hosts it may reach (None: settings alone)."""
        ...

    def confine(
        self,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        network: Decide | None = None,
        *,
        threads: ToolLane,
    ) -> AbstractAsyncContextManager[Confined]:
        """``session`` for a command run on an event loop: the layout's file work is done
        on one of ``threads``."""
        ...

    def door(self, path: Path, env: Mapping[str, str] | None = None) -> str | None:
        """What on the host runs or reads ``path`` by itself (a hooks folder a repository
        names, a file its configuration includes…), or None: writing there is writing
        the control plane. ``env``: the variables of the caller whose git and direnv would
        (None: this process's)."""
        ...


class HostAsker(Protocol):
    def for_command(self, command: str) -> Decide:
        """The decisions for the connections of ``command`` (named in the questions)."""
        ...


class SmallModel(Protocol):
    """A small, fast model for side questions (WebFetch applies its prompt to a page)."""

    @property
    def model(self) -> str: ...

    async def answer(self, system: str, prompt: str) -> str:
        """The model's text reply; raises ModelError when the request fails."""
        ...


@dataclass
class ToolConfig:
    """Knobs of the built-in tools (from settings)."""

    bash_default_timeout_ms: int = 120_000
    bash_max_timeout_ms: int = 600_000
    bash_max_output_chars: int = 30_000
    read_max_bytes: int = 256 * 1024
    read_max_lines: int = 2000
    read_max_line_chars: int = 2000
    glob_max_results: int = 100
    grep_max_chars: int = 20_000
    ripgrep: str | None = "rg"
    """Path or name of ripgrep; None forces the pure-Python Grep."""
    sandbox: bool = True
    """The user wants Bash confined; without a working ``shell_sandbox`` every command that
    is not read-only then needs the user's approval."""
    shell_sandbox: ShellSandbox | None = None
    shell_env: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """Extra environment for shell commands (settings ``env``, once the workspace is trusted)."""
    caller_env: Caller | None = None
    """The client the session works for (the warm daemon serves several): commands get its
    whole environment (under ``shell_env``) and umask, nothing of the daemon's; None
    in-process (this process's)."""
    additional_dirs: list[Path] = field(default_factory=lambda: list[Path]())
    """Directories besides the workspace that file tools may use (settings)."""
    bypass_disabled: bool = False
    """Settings forbid bypassPermissions mode (it then behaves as ``default``)."""
    small_model: SmallModel | None = None
    """The provider's small fast model, when it has one."""
    web_fetch_timeout_s: float = 30.0
    web_fetch_max_bytes: int = 10_000_000
    web_fetch_max_chars: int = 100_000
    """Markdown given to the small model (or, without one, to the model itself)."""
    web_cache: TtlCache[Page] = field(default_factory=lambda: TtlCache[Page]())
    network_allowed: list[str] = field(default_factory=lambda: list[str]())
    network_denied: list[str] = field(default_factory=lambda: list[str]())
    """Settings ``sandbox.network.allowedDomains`` / ``deniedDomains``."""


@dataclass
class SessionRunState:
    """Mutable state of one session that tools read and change (restored on resume)."""

    mode: Mode = "default"
    todos: list[PlanEntry] = field(default_factory=lambda: list[PlanEntry]())
    files: FileState = field(default_factory=FileState)
    agent_depth: int = 0
    """0 for the user's session, 1 for its subagents, and so on."""
    background_worker: bool = False
    """Running as (or under) a background agent: it may not start background agents."""
    threads: ToolLane = field(default_factory=lambda: shared_pool().lane())
    """Where the session's tools do blocking file work (shared with its subagents)."""


@dataclass
class ToolContext:
    """Passed to every tool call."""

    session_id: str
    tool_use_id: str
    cwd: Path
    """The workspace root; relative paths resolve against it."""
    editor: Editor
    state: SessionRunState
    config: ToolConfig
    tasks: TaskRegistry
    emit: Callable[[SessionUpdate], None]
    """Publish an update (e.g. live Bash output) to the editor while the tool runs."""
    additional_dirs: list[Path] = field(default_factory=lambda: list[Path]())
    approval: PermissionReply | None = None
    """The user's answer when this call was asked about (a plan approval says how to go on)."""
    network: HostAsker | None = None
    """Who decides the hosts a sandboxed command of this call may reach (rules, then the
    user); None: the settings' lists alone."""

    @property
    def files(self) -> FileState:
        return self.state.files

    @property
    def threads(self) -> ToolLane:
        return self.state.threads

    read_only_dirs: list[Path] = field(default_factory=lambda: list[Path]())
    """Directories the read tools may also use (the session's stored tool results)."""

    @property
    def home(self) -> Path:
        """``~`` of the caller the session works for (in the warm daemon: not the daemon's)."""
        return Path(expand_home("~", self.config.caller_env))

    @property
    def allowed_dirs(self) -> list[Path]:
        """Directories besides ``cwd`` that file tools may use (call and settings)."""
        return [*self.additional_dirs, *self.config.additional_dirs]

    @property
    def readable_dirs(self) -> list[Path]:
        """Directories besides ``cwd`` that the read tools may use."""
        return [*self.allowed_dirs, *self.read_only_dirs]
