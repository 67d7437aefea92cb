"""The home folder's doors by what is there, not by a list of names.

- A home folder inside the workspace (the user opened it, or a folder holding it): every
  entry directly in it whose name starts with a dot is a door — shells, editors, language
  managers and desktops load from there (``~/.cargo/env``, ``~/.nvm``, ``~/.fzf.bash``,
  ``~/.vim``, ``~/.emacs.el``…) — except the caches commands legitimately write
  (``WRITABLE_IN_HOME``), and so are the well-known ones that do not exist yet
  (``MISSING_DOORS``).
- Dotfiles linked from the home folder (stow, yadm, chezmoi's symlink mode): a link directly
  in the home folder, in ``~/.config`` or in ``~/.local/bin`` that points into the workspace
  makes its target a door, wherever the home folder is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether.sandbox.doors import Door
from tether.sandbox.exposure import within

WRITABLE_IN_HOME = frozenset(
    {
        *(".cache", ".npm", ".yarn", ".pnpm-store", ".bun", ".gradle", ".m2", ".ivy2"),
        *(".sbt", ".cargo/registry", ".rustup/tmp", ".nuget", ".dotnet", ".pub-cache"),
        *(".composer", ".cpanm", ".stack", ".cabal", ".ghcup", ".julia", ".hex", ".mix"),
        *(".node-gyp", ".deno", ".expo", ".android", ".conda", ".keras", ".ollama"),
        *(".Trash", ".thumbnails", ".bash_history", ".zsh_history", ".python_history"),
        *(".lesshst", ".viminfo", ".wget-hsts", ".sqlite_history", ".psql_history"),
        *(".node_repl_history", ".local/share/Trash", ".local/state"),
    }
)
"""Package caches and histories that builds and installs write in the home folder. What
they hold is data, not code the host runs on its own (``.npm``'s ``_cacache``, Maven's
``.m2/repository``); histories are hidden from commands anyway when they lie outside the
workspace. Only directly in the home folder: ``.cargo`` itself (``env``, ``bin``) stays a
door, its ``registry`` does not."""
MISSING_DOORS = (
    *(".bash_completion", ".bash_completion.d", ".fzf.bash", ".fzf.zsh", ".vim", ".emacs.el"),
    *(".node_modules", ".node_libraries", ".rustup", ".cargo", ".pyenv", ".rbenv", ".nvm"),
    *(".sdkman", ".asdf", ".volta", ".local", ".xsessionrc", ".Xresources", ".xbindkeysrc"),
    *(".gemrc", ".irbrc", ".pryrc", ".psqlrc", ".sqliterc", ".wgetrc", ".curlrc", ".mkshrc"),
    *(".perldl", ".octaverc", ".Rprofile", ".guile", ".sbclrc", ".ghci", ".lldbinit"),
    *(".gdbinit", ".bazelrc", ".condarc", ".pypirc", ".docker", ".kube", ".terraformrc"),
)
"""Dot entries the host loads code from when they appear, refused before they exist."""
FINER = {
    ".local": ("bin", "lib", "share/applications", "share/systemd", "share/nvim", "share/vim"),
    ".cargo": ("env", "env.fish", "bin", "config", "config.toml"),
}
"""Dot folders that hold both code the host runs and what builds write (``~/.local/state``,
``~/.cargo/registry``): only the former are doors."""
LINK_FOLDERS = ("", ".config", ".local/bin")
"""Where dotfile managers put links (relative to the home folder)."""
MAX_LINKS_SCANNED = 2000


def _home(env: Mapping[str, str]) -> Path | None:
    raw = env.get("HOME") or os.path.expanduser("~")
    return Path(os.path.normpath(raw)) if raw.startswith("/") and raw != "/" else None


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return within(path, roots)


def home_entries(roots: Sequence[Path], env: Mapping[str, str] | None = None) -> list[Door]:
    """The home folder's doors for the caller whose variables are ``env`` (None: this
    process's), see the module."""
    env = os.environ if env is None else env
    home = _home(env)
    if home is None:
        return []
    homes = dict.fromkeys((home, Path(os.path.realpath(home))))
    out: list[Door] = []
    why = "the user's shells, editors and tools load it from the home folder"
    for h in homes:
        if not _inside(h, roots):
            continue
        try:
            names = [e.name for e in os.scandir(h) if e.name.startswith(".")]
        except OSError:
            names = []
        for name in dict.fromkeys((*names, *MISSING_DOORS)):
            if name in FINER:
                out += [Door(h / name / part, why) for part in FINER[name]]
            elif name not in WRITABLE_IN_HOME:
                out.append(Door(h / name, why))
    scanned = 0
    for h in homes:
        for folder in LINK_FOLDERS:
            try:
                entries = list(os.scandir(h / folder))
            except OSError:
                continue
            for entry in entries:
                scanned += 1
                if scanned > MAX_LINKS_SCANNED:
                    return out
                if not entry.is_symlink():
                    continue
                target = Path(os.path.realpath(entry.path))
                if _inside(target, roots) and target not in roots:
                    linked = f"{entry.path} links to it: {why}"
                    out.append(Door(target, linked))
    return out
