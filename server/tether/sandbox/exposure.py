"""What a sandboxed command may read outside the workspace, and which sockets it can reach.

Reading: the home directory is replaced by an empty one (``hideHome``), then the
toolchains that live there (``HOME_TOOLCHAINS``), the user's ``readablePaths`` and the
workspace are put back. Sensitive locations (``SENSITIVE``: keys, cloud and registry
credentials, shell histories, browser profiles, Tether's and Claude Code's own settings;
plus ``hiddenPaths``) are hidden wherever they are — inside the workspace too — unless the
workspace lies inside one or ``readablePaths`` names it.

Sockets: a filesystem (AF_UNIX) socket ignores read-only mounts, so a daemon listening on
one (Docker, an SSH agent, a desktop bus, an editor) would take orders from inside the
sandbox. A seccomp filter cannot see the path a ``connect`` names (it is behind a
pointer), so it could only forbid AF_UNIX altogether, which breaks programs that use
sockets of their own in the workspace or the private ``/tmp`` (multiprocessing's
forkserver, test servers). The robust choice is to hide: ``/tmp`` and ``/run`` are private,
the home directory is hidden, and every other socket bound on the host when the command
starts (the kernel lists them in ``/proc/net/unix``) is covered with ``/dev/null``.
Abstract sockets belong to the network namespace, which the sandbox does not share.
The workspace is no exception: the table lists the sockets of the host's network namespace
only, never those of sandboxed commands (they have their own), so a socket it lists in the
workspace is a host daemon's (``tmux -S ./dev.sock``, ``nvim --listen``, a dev database).
Limits: a socket bound after the command started, or bound by a relative name, is not
covered unless it lies in a hidden directory; with ``allowNetwork`` the host's abstract
sockets are reachable, and a socket a background command with ``allowNetwork`` bound in the
workspace is covered for the commands after it (it shares the host's table).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SENSITIVE = (
    *("~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings", "~/.pki"),
    *("~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker", "~/.oci"),
    *("~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.npmrc"),
    *("~/.yarnrc", "~/.yarnrc.yml", "~/.pypirc", "~/.gem/credentials", "~/.m2/settings.xml"),
    *("~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.config/gh", "~/.config/hub"),
    *("~/.vault-token", "~/.terraform.d", "~/.config/op", "~/.config/tether"),
    *("~/.local/share/tether", "~/.claude", "~/.claude.json", "~/.config/anthropic"),
    *("~/.bash_history", "~/.zsh_history", "~/.zhistory", "~/.histfile", "~/.sh_history"),
    *("~/.python_history", "~/.node_repl_history", "~/.psql_history", "~/.mysql_history"),
    *("~/.sqlite_history", "~/.lesshst", "~/.local/share/fish/fish_history", "~/.viminfo"),
    *("~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/.config/Code"),
    *("~/.config/BraveSoftware", "~/.vscode-server", "~/.local/share/nvim/shada"),
    *("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/root/.ssh"),
)
"""Hidden from shell commands unless the workspace lies inside one or a setting allows it."""
HOME_TOOLCHAINS = (
    *("~/.gitconfig", "~/.config/git", "~/.local/bin", "~/.local/lib", "~/.local/share/uv"),
    *("~/.local/share/pipx", "~/.local/pipx", "~/.cache/uv", "~/.cache/pip", "~/.pyenv"),
    *("~/.rye", "~/.cache/pypoetry", "~/.local/share/virtualenvs", "~/.virtualenvs"),
    *("~/.cargo", "~/.rustup", "~/.nvm", "~/.volta", "~/.fnm", "~/.local/share/fnm"),
    *("~/.bun", "~/.deno", "~/.npm", "~/.cache/yarn", "~/.local/share/pnpm", "~/go"),
    *("~/.sdkman", "~/.m2/repository", "~/.gradle/caches", "~/.gradle/wrapper", "~/.asdf"),
    *("~/.local/share/mise", "~/.elan", "~/.ghcup", "~/.cabal", "~/.stack", "~/.opam"),
    "~/.nix-profile",
)
"""Readable in a hidden home: compilers, package caches and git's own settings."""
PRIVATE_DIRS = (Path("/tmp"), Path("/run"), Path("/dev"), Path("/proc"))
"""Replaced inside the sandbox (nothing of the host's shows there)."""


def expand(raw: str, base: Path, *, resolve: bool = True) -> Path:
    path = Path(os.path.expanduser(raw))
    path = path if path.is_absolute() else base / path
    return Path(os.path.realpath(path)) if resolve else Path(os.path.normpath(path))


def _under(path: Path, roots: Iterable[Path]) -> bool:
    # Plain string comparison of canonical paths: ``PurePath.is_relative_to`` re-parses both
    # paths on every call, and this runs thousands of times per command.
    text = str(path)
    for root in roots:
        prefix = str(root)
        if text == prefix or prefix == "/" or text.startswith(prefix + "/"):
            return True
    return False


def within(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or under one (``PurePath.is_relative_to``), by the
    text of the paths: the same test (a path's text is its parts joined by ``/``), without
    parsing both paths again on every call (a command's layout makes thousands)."""
    text = str(path)
    for root in roots:
        prefix = str(root)
        if text.startswith("//") or prefix.startswith("//"):  # POSIX keeps a leading "//"
            if path == root or path.is_relative_to(root):
                return True
        elif text == prefix or text.startswith(prefix if prefix == "/" else prefix + "/"):
            return True
    return False


@lru_cache(maxsize=8)
def _expanded(home: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with ``~`` expanded for this ``HOME``, unresolved (made once per home: building
    paths cost more than the rest of a command's sandbox setup)."""
    del home  # the cache key: ``expanduser`` reads it from the environment
    return tuple(os.path.normpath(os.path.expanduser(name)) for name in names)


def _present(names: tuple[str, ...], *, follow: bool) -> list[str]:
    """Those of ``names`` (``~``-relative) that exist: one ``stat`` each, with ``follow``
    of the final link too (``lstat`` otherwise)."""
    exists = os.path.exists if follow else os.path.lexists
    return [p for p in _expanded(os.environ.get("HOME", ""), names) if exists(p)]


@dataclass(frozen=True)
class Exposure:
    """The concrete layout for one command."""

    hide: tuple[Path, ...] = ()
    """Directories replaced by an empty one before anything is bound back (the home)."""
    reveal: tuple[Path, ...] = ()
    """Bound back read-only inside hidden directories."""
    links: tuple[tuple[Path, Path], ...] = ()
    """Symlinks recreated inside hidden directories (``~/.nix-profile`` → its target)."""
    secret: tuple[Path, ...] = ()
    """Hidden after everything else is bound (sensitive locations that exist)."""
    sockets: tuple[Path, ...] = ()
    """Host sockets covered with /dev/null."""


def listening_sockets(table: Path = Path("/proc/net/unix")) -> list[Path]:
    """Filesystem sockets bound on the host (this network namespace), that still exist."""
    try:
        lines = table.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return []
    found: dict[Path, None] = {}
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith("/"):
            path = Path(fields[7])
            try:
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    found[Path(os.path.realpath(path))] = None
            except OSError:
                continue
    return list(found)


def exposure(
    root: Path,
    writable: Sequence[Path],
    *,
    hide_home: bool,
    readable: Sequence[Path],
    hidden: Sequence[Path],
    sockets: Sequence[Path] = (),
) -> Exposure:
    """What to hide, reveal and cover for a command in ``root`` (all paths canonical)."""
    home = Path(os.path.realpath(Path.home()))
    open_paths = (root, *writable)
    hide: list[Path] = []
    reveal: list[Path] = []
    links: list[tuple[Path, Path]] = []
    if hide_home and home != Path("/") and home.is_dir() and not _under(home, open_paths):
        hide.append(home)
        toolchains = (Path(p) for p in _present(HOME_TOOLCHAINS, follow=True))
        for wanted in (*toolchains, *readable):
            real = Path(os.path.realpath(wanted))
            if not os.path.exists(real):
                continue
            if real != wanted and _under(wanted, hide):
                links.append((wanted, real))
            if _under(real, hide):
                reveal.append(real)
    secret: list[Path] = []
    sensitive = (Path(os.path.realpath(p)) for p in _present(SENSITIVE, follow=False))
    for path in dict.fromkeys((*sensitive, *hidden)):
        if _under(root, [path]) or any(_under(p, [path]) for p in (*writable, *readable)):
            continue  # the workspace lies inside it, or the user opened it on purpose
        if _under(path, hide) and not _under(path, (*reveal, *open_paths)):
            continue  # already gone with the home directory
        if os.path.lexists(path):
            secret.append(path)

    def visible(path: Path) -> bool:
        if _under(path, secret):
            return False  # hidden already
        if _under(path, (root, *writable, *reveal)):
            # Bound back in, wherever it is; in the workspace too: the table lists the
            # host's sockets only (commands have a network namespace of their own), so a
            # socket there is a host daemon's (``tmux -S ./x``, ``nvim --listen``).
            return True
        return not _under(path, (*PRIVATE_DIRS, *hide))

    covered = [s for s in sockets if visible(s)]
    return Exposure(tuple(hide), tuple(reveal), tuple(links), tuple(secret), tuple(covered))
