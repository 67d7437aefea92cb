"""Whose world a process started for a session runs in: the one place that builds it.

In-process that is this process's: its environment, directory and umask, which every child
inherits. The warm daemon serves several callers (terminals, editors) and its own
environment is whoever started it, by accident: a session it runs for a caller works for
that caller alone, so every process started for it (Bash, hooks, stdio MCP servers,
``apiKeyHelper``) gets that caller's whole environment and umask, as if started from the
caller's shell, and nothing of the daemon's. A ``Caller`` is what a client sends of itself
(``tether/print``, ``tether/clientEnvironment``).

Layering, as Claude Code does it: the caller's environment, then the settings' ``env`` on
top, then what the site adds of its own (a hook's ``CLAUDE_PROJECT_DIR``, an MCP server's
configured ``env``). Model credentials are the exception: commands the agent runs (Bash)
never get them, whichever layer set them; hooks, MCP servers and ``apiKeyHelper`` do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

MODEL_CREDENTIALS = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "TETHER_API_KEY"}
)
"""Model keys: commands the agent runs (Bash) have no business with them."""

INHERIT_UMASK = -1
"""``subprocess``'s value for "leave the umask as this process has it"."""


class Caller(Mapping[str, str]):
    """A client the warm daemon runs sessions for, as the processes started for it must see
    it: its whole environment (read as a mapping of its variables: the model's HTTP client
    looks for keys, base URLs and proxies in it), its working directory and its umask.
    Immutable: a session keeps the caller it started with."""

    __slots__ = ("_env", "cwd", "umask")

    def __init__(
        self, env: Mapping[str, str], *, cwd: Path | None = None, umask: int | None = None
    ) -> None:
        self._env: Mapping[str, str] = MappingProxyType(dict(env))
        self.cwd = cwd
        """The caller's working directory (None: not known)."""
        self.umask = umask
        """The caller's file-creation mask (None: not known; this process's applies)."""

    def __getitem__(self, name: str) -> str:
        return self._env[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Caller):
            return NotImplemented
        return (self._env, self.cwd, self.umask) == (other._env, other.cwd, other.umask)

    def __hash__(self) -> int:
        return hash((frozenset(self._env.items()), self.cwd, self.umask))

    def __repr__(self) -> str:
        # Never the values: they hold keys and tokens.
        return f"Caller({len(self._env)} variables, cwd={self.cwd}, umask={self.umask!r})"

    @property
    def key(self) -> tuple[tuple[tuple[str, str], ...], int | None]:
        """What tells two callers' processes apart (shared MCP servers are per caller)."""
        return tuple(sorted(self._env.items())), self.umask


def as_caller(env: Mapping[str, str] | None) -> Caller | None:
    """``env`` as a caller (None stays None: this process's own world)."""
    if env is None or isinstance(env, Caller):
        return env
    return Caller(env)


def environ_of(caller: Mapping[str, str] | None) -> Mapping[str, str]:
    """The variables of the session's caller, to read (None: this process's own). What a
    session decides from a variable (``CDPATH``, ``SHELL``, git's configuration...) reads
    it here, never from ``os.environ``: in the warm daemon that is whoever started it."""
    return os.environ if caller is None else caller


def expand_home(raw: str, caller: Mapping[str, str] | None) -> str:
    """``~`` and ``~/…`` as the caller's shell expands them: its ``HOME``, not the daemon's
    (``~user``: the system's account database, like ``os.path.expanduser``); ``caller``
    None: this process's."""
    if not raw.startswith("~"):
        return raw
    home = environ_of(caller).get("HOME")
    if home and (raw == "~" or raw.startswith("~/")):
        return home.rstrip("/") + raw[1:] if home.rstrip("/") else "/" + raw[2:]
    return os.path.expanduser(raw)


def process_env(
    caller: Mapping[str, str] | None,
    *,
    credentials: bool,
    settings: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a process started for a session: the caller's whole environment
    (None: this process's own), under the settings' ``env``; without model keys unless
    ``credentials`` (hooks, MCP servers and ``apiKeyHelper`` get them; Bash does not)."""
    env = dict(os.environ if caller is None else caller)
    if settings:
        env.update(settings)
    if not credentials:
        for name in MODEL_CREDENTIALS:
            env.pop(name, None)
    return env


def process_umask(caller: Mapping[str, str] | None) -> int:
    """The umask a process started for ``caller`` gets (``INHERIT_UMASK``: this process's)."""
    if isinstance(caller, Caller) and caller.umask is not None:
        return caller.umask
    return INHERIT_UMASK


def current_umask() -> int:
    """This process's umask, read without changing it where the system says (``os.umask``
    sets as it reads, which other threads would see for a moment)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


# -- the shell's view of a name ------------------------------------------------------------

CONVENTIONAL_PREFIXES = ("ANTHROPIC_", "OPENAI_", "TETHER_", "CLAUDE_", "AWS_", "GOOGLE_")
CONVENTIONAL_NAMES = frozenset(
    {
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "PATH",
        "VIRTUAL_ENV",
        "LANG",
        "LC_ALL",
    }
)


def is_session_variable(name: str) -> bool:
    """A name callers commonly export (keys, proxies, ``PATH``...): the shell-command
    analysis, which cannot see a caller's environment, treats it as exported. Not a
    selection of what a process gets: that is the caller's whole environment."""
    return name in CONVENTIONAL_NAMES or name.startswith(CONVENTIONAL_PREFIXES)
