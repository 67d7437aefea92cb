"""Paths outside the usual control-plane names that the host runs or reads on its own.

A sandboxed command must not plant code the host later runs without the user choosing to.
The protected names cover most of it (``.git``, ``.vscode``, ``.envrc``…); the rest is
named by configuration, so it is read from there:

- git: every repository under the workspace (and the one around it), with the user's and
  the system's configuration and every file they include (``include.path``,
  ``includeIf.*.path``, whether or not the condition holds now). What they name is
  protected: the hooks folder (``core.hooksPath``; for Husky's ``.husky/_`` the whole
  ``.husky``, whose scripts its hooks call), every included file, and every path in a value
  git runs (``git_exec.EXECUTING``: ``core.fsmonitor``, diff and merge drivers, filters,
  credential helpers, aliases with ``!``…). Configuration is read with
  ``git config --file F --list -z`` (git's own parser; includes are followed here), once
  per file version.
- hook managers: the configuration of pre-commit, lefthook and overcommit when an installed
  hook calls them (it lists the commands the hook runs).
- direnv: what an ``.envrc`` loads with it (``dotenv``, ``source_env``, ``source``/``.``,
  ``watch_file``; ``use flake``/``use nix`` evaluate the Nix files beside it, whose shell
  hooks run on ``cd``); ``.env`` files too where direnv's ``load_dotenv`` is on; and the
  folders it puts where the user's shell loads programs and libraries from (``PATH_add``,
  ``path_add``, ``load_prefix``, ``layout node|python|go|…``, ``export PATH=$PWD/…``).
- the home folder, when the workspace holds it: shell startup files, ``~/.config``,
  ``~/.local/bin``, ``~/.ssh``… (``HOME_DOORS``); and git's user configuration wherever
  ``GIT_CONFIG_GLOBAL`` or ``XDG_CONFIG_HOME`` puts it.
- VS Code: programs of tasks that run when the folder opens (``runOn: folderOpen``), and
  the programs its workspace settings name (an interpreter, a terminal profile's shell).
- package managers: the project's ``.npmrc``, ``.yarnrc.yml``, pnpm's hook file, and the
  programs they name (``script-shell``, ``yarnPath``).
- git's ``init.templateDir``: its hooks are copied into every new repository.

A door that exists is bound read-only; a missing one is refused to the command by the gate,
with its ancestors when they would be brought in by a rename or a link.

Which user configuration git and direnv read (``HOME``, ``XDG_CONFIG_HOME``,
``GIT_CONFIG_GLOBAL``/``SYSTEM``/``NOSYSTEM``, the ``GIT_CONFIG_COUNT`` entries) is the
session's caller's: the user runs git from that shell, and in the warm daemon this
process's environment is whoever started it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.core.environ import Caller, expand_home
from tether.core.files import read_regular
from tether.permissions.git_exec import executes, program_words
from tether.sandbox.door_rule import git_value_paths

log = logging.getLogger(__name__)

MAX_DOOR_TEXT = 1 << 18
"""How much of a configuration file is read for the programs it names; and only a regular
file's (``read_regular``): a FIFO a command made would block the reader for good, a link to
``/dev/zero`` never end, a sparse file be read whole."""


def door_text(path: Path) -> str:
    """What doors are looked for in, of a configuration file: its first ``MAX_DOOR_TEXT``
    bytes, a regular file's only; raises ``OSError`` when there are none."""
    return read_regular(path, MAX_DOOR_TEXT).decode("utf-8", errors="replace")


GIT_TIMEOUT_S = 5.0
MAX_INCLUDE_DEPTH = 10
"""git's own limit on nested includes."""


@dataclass(frozen=True)
class Door:
    path: Path
    """Absolute, ``..`` resolved, symlinks not (the name the host uses)."""
    why: str
    """What on the host runs or reads it, for the model."""


@dataclass(frozen=True)
class Repo:
    git_dir: Path
    worktree: Path | None
    """None for a bare repository."""


DOOR_VARIABLES = (
    *("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "MISE_ENV"),
)
"""The variables the doors depend on (with ``GIT_CONFIG_NOSYSTEM`` and the
``GIT_CONFIG_COUNT`` entries: ``door_key``)."""


def door_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """What of a caller's variables decides its doors: callers alike here share them."""
    return tuple(
        sorted(
            (name, value)
            for name, value in env.items()
            if name in DOOR_VARIABLES or name.startswith("GIT_CONFIG")
        )
    )


def _absolute(raw: str, base: Path, env: Mapping[str, str] | None = None) -> Path:
    path = Path(expand_home(raw, env))
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


class ConfigReader:
    """``git config --file F --list -z``, once per version of each file."""

    def __init__(self, git: str | None = None) -> None:
        self._git = git or shutil.which("git")
        self._cache: dict[Path, tuple[tuple[int, int, int, int], list[tuple[str, str]]]] = {}
        self._lock = threading.Lock()

    def entries(self, path: Path) -> list[tuple[str, str]]:
        try:
            st = os.stat(path)
        except OSError:
            return []
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with self._lock:
            hit = self._cache.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        found = self._read(path)
        with self._lock:
            self._cache[path] = (stamp, found)
        return found

    def _read(self, path: Path) -> list[tuple[str, str]]:
        if self._git is None:
            return []  # no git here: the host runs none of it either
        try:
            done = subprocess.run(
                [self._git, "config", "--file", str(path), "--list", "-z"],
                capture_output=True,
                timeout=GIT_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
                # Only the file is read (no includes): nothing of any environment matters.
                env={
                    "PATH": os.defpath,
                    "LC_ALL": "C",
                    "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_CONFIG_GLOBAL": "/dev/null",
                },
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            log.debug("cannot read %s: %s", path, e)
            return []
        if done.returncode != 0:
            return []  # git refuses a file it cannot parse, on the host too
        out: list[tuple[str, str]] = []
        for record in done.stdout.split(b"\0"):
            if record:
                key, _, value = os.fsdecode(record).partition("\n")
                out.append((key, value))
        return out


def _common_dir(git_dir: Path) -> Path:
    """Where a linked worktree's repository keeps its configuration and hooks."""
    try:
        text = door_text(git_dir / "commondir").strip()
    except OSError:
        return git_dir
    return _absolute(text, git_dir) if text else git_dir


HOOK_FRAMEWORKS = {
    b"pre-commit": (".pre-commit-config.yaml", ".pre-commit-config.yml"),
    b"lefthook": (
        *("lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml"),
        *("lefthook-local.yml", ".lefthook-local.yml", "lefthook.toml", ".lefthook.toml"),
    ),
    b"overcommit": (".overcommit.yml",),
}
"""Hook managers whose installed hooks run what a file in the work tree lists."""
MAX_HOOK_BYTES = 1 << 16


def hook_frameworks(hooks_dirs: Iterable[Path], worktree: Path) -> list[Door]:
    """The configuration files of the hook managers the installed hooks call: editing one
    is editing the hooks."""
    seen: set[bytes] = set()
    for folder in hooks_dirs:
        try:
            hooks = [
                e for e in os.scandir(folder) if e.is_file() and not e.name.endswith(".sample")
            ]
        except OSError:
            continue
        for hook in hooks:
            try:
                with open(hook.path, "rb") as f:
                    text = f.read(MAX_HOOK_BYTES)
            except OSError:
                continue
            seen.update(name for name in HOOK_FRAMEWORKS if name in text)
    out: list[Door] = []
    for name in sorted(seen):
        for file in HOOK_FRAMEWORKS[name]:
            why = f"the installed git hooks run what it lists ({name.decode()})"
            out.append(Door(worktree / file, why))
            out += _hook_scripts(worktree / file, worktree, why)
    return out


_HOOK_COMMAND = re.compile(r"^[\s-]*(?:entry|run|command)\s*:\s*(.+)$", re.MULTILINE)


def _hook_scripts(config: Path, worktree: Path, why: str) -> list[Door]:
    """The scripts in the work tree a hook manager's configuration runs (``entry:``,
    ``run:``)."""
    try:
        text = door_text(config)
    except OSError:
        return []
    out: list[Door] = []
    for match in _HOOK_COMMAND.finditer(text):
        for word in _words(match.group(1).strip().strip("'\"")):
            if "/" in word and "$" not in word and "://" not in word and "{" not in word:
                out.append(Door(_absolute(word, worktree), f"{why}: {config.name}"))
    return out


def direnv_loads_dotenv(env: Mapping[str, str] | None = None) -> bool:
    """direnv's own setting that loads every ``.env`` like an ``.envrc``, as the caller's
    direnv reads it (``env``: its variables; None: this process's)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME") or expand_home("~/.config", env)
    for name in ("direnv.toml", "config.toml"):
        try:
            with open(Path(xdg) / "direnv" / name, "rb") as f:
                data = tomllib.load(f)
        except (OSError, ValueError):
            continue
        section = data.get("global")
        if isinstance(section, dict) and section.get("load_dotenv") is True:  # pyright: ignore[reportUnknownMemberType]
            return True
    return False


def user_configs(env: Mapping[str, str] | None = None) -> list[Path]:
    """The configuration files every repository reads besides its own, for the caller's
    git (``env``: its variables; None: this process's). A file git would not read (the
    system's under ``GIT_CONFIG_NOSYSTEM``) is listed anyway: protecting it costs nothing."""
    env = os.environ if env is None else env
    out: list[Path] = [Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")]
    if env.get("GIT_CONFIG_GLOBAL"):
        # A relative name is from the caller's directory.
        where = env.cwd if isinstance(env, Caller) else None
        out.append(_absolute(env["GIT_CONFIG_GLOBAL"], where or Path.cwd(), env))
    xdg = env.get("XDG_CONFIG_HOME") or expand_home("~/.config", env)
    out += [Path(xdg) / "git" / "config", Path(expand_home("~/.gitconfig", env))]
    return out


def environment_entries(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The configuration the caller's environment gives every git it runs
    (``GIT_CONFIG_COUNT`` with ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``)."""
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        return []
    out: list[tuple[str, str]] = []
    for n in range(max(0, min(count, 1000))):
        key = env.get(f"GIT_CONFIG_KEY_{n}")
        if key:
            out.append((key, env.get(f"GIT_CONFIG_VALUE_{n}", "")))
    return out


class DoorFinder:
    def __init__(self, reader: ConfigReader | None = None) -> None:
        self.reader = reader or ConfigReader()

    def git(self, repos: Sequence[Repo], env: Mapping[str, str] | None = None) -> list[Door]:
        """The doors of ``repos`` as the caller's git sees them (``env``: its variables;
        None: this process's)."""
        env = os.environ if env is None else env
        doors: list[Door] = []
        shared: list[tuple[Path, str, str]] = []
        for config in user_configs(env):
            shared += self._config(config, doors, 0, env)
        here = Path("the environment (GIT_CONFIG_COUNT)")
        shared += [(here, key, value) for key, value in environment_entries(env)]
        for repo in repos:
            base = repo.worktree or repo.git_dir
            own: list[tuple[Path, str, str]] = []
            for git_dir in dict.fromkeys((_common_dir(repo.git_dir), repo.git_dir)):
                for name in ("config", "config.worktree"):
                    own += self._config(git_dir / name, doors, 0, env)
            hooks_dirs = [_common_dir(repo.git_dir) / "hooks"]
            for config, key, value in (*shared, *own):
                if key.lower() != "core.hookspath":
                    continue  # the last one set wins, but any of them may win tomorrow
                target = _absolute(value, base, env)
                why = f"git runs the hooks there (core.hooksPath in {config})"
                doors.append(Door(target, why))
                hooks_dirs.append(target)
                if target.name == "_":  # Husky: its hooks run the scripts beside them
                    doors.append(Door(target.parent, f"Husky's hook scripts ({why})"))
            for config, key, value in (*shared, *own):
                if key.lower() == "init.templatedir":  # its hooks land in every new repository
                    why = (
                        f"git copies its hooks into new repositories (init.templateDir in {config})"
                    )
                    doors.append(Door(_absolute(value, base), why))
            for config, key, value in (*shared, *own):
                if key.lower() == "core.hookspath" or not executes(key, value):
                    continue
                why = f"git runs it ({key} in {config})"
                for word in program_words(value):
                    if "/" in word and "://" not in word:
                        doors.append(Door(_absolute(word, base, env), why))
                doors += [Door(p, why) for p in git_value_paths(value, base)]
            if repo.worktree is not None:
                doors += hook_frameworks(hooks_dirs, repo.worktree)
        return doors

    def _config(
        self, path: Path, doors: list[Door], depth: int, env: Mapping[str, str]
    ) -> list[tuple[Path, str, str]]:
        """The entries of ``path`` and of every file it includes (``config``, key, value)."""
        out: list[tuple[Path, str, str]] = []
        for key, value in self.reader.entries(path):
            out.append((path, key, value))
            lowered = key.lower()
            if lowered == "include.path" or (
                lowered.startswith("includeif.") and lowered.endswith(".path")
            ):
                target = _absolute(value, path.parent, env)
                doors.append(Door(target, f"git reads it as configuration (included by {path})"))
                if depth < MAX_INCLUDE_DEPTH:
                    out += self._config(target, doors, depth + 1, env)
        return out


HOME_DOORS = (
    *(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".bash_aliases"),
    *(".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc"),
    *(".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc"),
    *(".pam_environment", ".inputrc", ".gitconfig", ".npmrc", ".yarnrc", ".yarnrc.yml"),
    *(".pythonrc", ".pythonstartup", ".mailcap", ".tmux.conf", ".screenrc", ".emacs"),
    *(".emacs.d", ".gnupg", ".ssh", ".bin", "bin", ".local/bin", ".local/lib"),
    *(".local/share/applications", ".local/share/systemd", ".local/share/nvim/site"),
    *(".cargo/bin", ".cargo/config", ".cargo/config.toml", "go/bin", ".bun/bin", ".deno/bin"),
    *(".nvm/nvm.sh", ".sdkman/bin", ".asdf/asdf.sh", ".pyenv/bin", ".pyenv/shims"),
    *(".oh-my-zsh", ".zsh", ".bashrc.d", ".profile.d", ".config"),
)
"""In a home directory that lies inside the workspace: what the user's shells, login
session, desktop, git and package tools read or run on their own (startup files, folders
on ``PATH``, autostart entries, user services, ``~/.ssh/config``'s ``ProxyCommand``, user
site packages, whose ``.pth`` files every Python runs). ``~/.config`` is whole: git's
configuration, fish, autostart, systemd user units, editors and ``environment.d`` all
live there, and ``$XDG_CONFIG_HOME`` is treated the same."""


def home_doors(roots: Sequence[Path], env: Mapping[str, str] | None = None) -> list[Door]:
    """The home directory's doors when the home lies inside one of ``roots`` (the user
    opened the home folder, or a folder above it, as the workspace); ``env``: the caller's
    variables (None: this process's)."""
    env = os.environ if env is None else env
    home = Path(expand_home("~", env))
    homes = dict.fromkeys((Path(os.path.normpath(home)), Path(os.path.realpath(home))))
    if not any(h == r or h.is_relative_to(r) for h in homes for r in roots):
        return []
    why = "the user's shells, desktop, git and tools read or run it from the home folder"
    out = [Door(h / name, why) for h in homes for name in HOME_DOORS]
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        out.append(Door(Path(os.path.normpath(xdg)), why))
    return out


_DIRENV_FILES = re.compile(
    r"^\s*(dotenv|dotenv_if_exists|source_env|source_env_if_exists|source|\.|watch_file)"
    r"(\s+.*)?$"
)


PATH_WHY = "direnv puts it on the search path of the user's shell, whose commands run from it"


def direnv(envrc: Path) -> list[Door]:
    """What an ``.envrc`` loads besides itself."""
    try:
        text = door_text(envrc)
    except OSError:
        return []
    base = envrc.parent
    out: list[Door] = []
    why = f"direnv loads it when a shell enters the folder ({envrc})"
    for line in text.splitlines():
        words = _words(line)
        if not words:
            continue
        match = _DIRENV_FILES.match(line)
        if match is not None:
            command, args = words[0], words[1:]
            if command.startswith("dotenv") and not args:
                args = [".env"]
            for arg in args:
                if not arg.startswith("-") and "$" not in arg:
                    target = _absolute(arg, base)
                    out.append(Door(target, why))
                    if command.startswith("source_env"):
                        out.append(Door(target / ".envrc", why))
        elif words[:2] in (["use", "flake"], ["use", "nix"]):
            for name in ("flake.nix", "flake.lock", "shell.nix", "default.nix"):
                out.append(Door(base / name, why))
        else:
            out += [Door(p, f"{PATH_WHY} ({envrc})") for p in _direnv_paths(words, base)]
    return out


_LAYOUTS = {
    "node": ("node_modules/.bin",),
    "php": ("vendor/bin",),
    "go": ("bin",),
    "poetry": (".venv",),
    "uv": (".venv",),
    "pipenv": (".venv",),
}
"""What ``layout NAME`` puts on ``PATH`` besides its folder under ``.direnv``."""
SEARCH_PATHS = frozenset(
    {
        *("PATH", "PYTHONPATH", "NODE_PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PERL5LIB"),
        *("RUBYLIB", "GEM_HOME", "GEM_PATH", "BUNDLE_BIN", "GOBIN", "CARGO_HOME", "VIRTUAL_ENV"),
        *("PYTHONSTARTUP", "PYTHONUSERBASE", "NPM_CONFIG_PREFIX", "CLASSPATH", "LUA_PATH"),
        *("LUA_CPATH", "BASH_ENV", "ENV", "ZDOTDIR", "GIT_EXEC_PATH", "PKG_CONFIG_PATH"),
    }
)
"""Variables naming where programs and libraries are loaded from (or a script each shell
sources)."""
_PWD = re.compile(r"^(\$PWD|\$\{PWD\}|\$\(pwd\))(?=/|$)")


def _direnv_paths(words: list[str], base: Path) -> list[Path]:
    """The folders an ``.envrc`` line puts where the user's shell loads code from:
    ``PATH_add``, ``path_add VAR``, ``load_prefix``, ``layout …``, ``export PATH=…``."""
    command, args = words[0], words[1:]
    found: list[str] = []
    if command == "PATH_add":
        found = args
    elif command == "path_add" and args:
        found = args[1:]
    elif command == "load_prefix":
        found = args[:1]
    elif command == "layout" and args:
        found = [".direnv", *_LAYOUTS.get(args[0], ())]
    elif command in ("export", "declare", "typeset", "local") or "=" in command:
        for word in words if "=" in command else args:
            name, eq, value = word.partition("=")
            if eq and name in SEARCH_PATHS:
                found += value.split(":")
    out: list[Path] = []
    for raw in found:
        raw = _PWD.sub(".", raw.strip())
        if raw and not raw.startswith("-") and "$" not in raw and "`" not in raw:
            out.append(_absolute(raw, base))
    return out


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


_COMMENTS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMAS = re.compile(r",(\s*[}\]])")


def folder_open_tasks(tasks_json: Path) -> list[Door]:
    """Programs VS Code runs when the folder opens (``.vscode/tasks.json``, JSONC)."""
    try:
        text = door_text(tasks_json)
    except OSError:
        return []
    text = _COMMENTS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    try:
        data: object = json.loads(_TRAILING_COMMAS.sub(r"\1", text))
    except ValueError:
        return []
    folder = tasks_json.parent.parent
    out: list[Door] = []
    for task in _tasks(data):
        options = task.get("runOptions")
        if not isinstance(options, dict) or options.get("runOn") != "folderOpen":  # pyright: ignore[reportUnknownMemberType]
            continue
        words: list[str] = []
        command = task.get("command")
        if isinstance(command, str):
            words += _words(command)
        args = task.get("args")
        if isinstance(args, list):
            words += [a for a in args if isinstance(a, str)]  # pyright: ignore[reportUnknownVariableType]
        for word in words:
            word = word.replace("${workspaceFolder}", str(folder))
            if "/" in word and "${" not in word and "://" not in word:
                why = f"VS Code runs it when the folder opens ({tasks_json})"
                out.append(Door(_absolute(word, folder), why))
    return out


PACKAGE_CONFIGS = (".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".pnpmfile.mjs")
"""A project's package-manager configuration: npm's ``script-shell``/``node-options``,
Yarn's ``yarnPath`` (the program every ``yarn`` runs) and pnpm's hook file run code."""
_PACKAGE_PROGRAM = re.compile(
    r"^\s*(script-shell|shell|yarnPath|yarn-path|node-options|onload-script)\s*[=:]\s*[\"']?"
    r"([^\"'\s#]+)",
    re.MULTILINE,
)


MISE_PATHS = (".config/mise.toml", ".config/mise", "mise/config.toml")
"""mise's configuration under a folder besides the names protected everywhere
(``controlplane.PROTECTED_FILES``)."""


def version_manager_configs(root: Path, env: Mapping[str, str] | None = None) -> list[Door]:
    """mise's configuration folders at the top of ``root``, and the environment-specific
    files the caller's ``MISE_ENV`` makes it read (``mise.production.toml``…)."""
    env = os.environ if env is None else env
    why = "mise's shell hook loads it when a shell enters the folder (env, hooks, tools)"
    out = [Door(root / rel, why) for rel in MISE_PATHS]
    for name in env.get("MISE_ENV", "").split(","):
        name = name.strip()
        if name and "/" not in name:
            out += [Door(root / f"{dot}mise.{name}.toml", why) for dot in ("", ".")]
            out.append(Door(root / ".config" / f"mise.{name}.toml", why))
    return out


def package_configs(root: Path) -> list[Door]:
    """The package managers' configuration at the top of ``root``, and the programs it
    names."""
    out: list[Door] = []
    for name in PACKAGE_CONFIGS:
        path = root / name
        why = f"the package manager runs what it names ({name})"
        out.append(Door(path, why))
        try:
            text = door_text(path)
        except OSError:
            continue
        for match in _PACKAGE_PROGRAM.finditer(text):
            value = match.group(2).replace("${PWD}", ".").replace("$PWD", ".")
            if "/" in value and "$" not in value and "://" not in value:
                out.append(Door(_absolute(value, root), f"{why}: {match.group(1)}"))
    return out


_PROGRAM_KEY = re.compile(
    r"(path|interpreter|executable|command|program|shell|binary|server|bin|runtime)$",
    re.IGNORECASE,
)


def settings_programs(settings_json: Path) -> list[Door]:
    """Files VS Code's workspace settings name as programs to run (an interpreter, a
    terminal profile's shell, a linter's executable): keys ending in ``path``,
    ``executable``, ``command``…, wherever they are nested."""
    data = _jsonc(settings_json)
    folder = settings_json.parent.parent
    why = f"VS Code runs it, named by the workspace settings ({settings_json})"
    out: list[Door] = []
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack += [(str(k), v) for k, v in value.items()]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        elif isinstance(value, list):
            stack += [(key, v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        elif isinstance(value, str) and _PROGRAM_KEY.search(key.rsplit(".", 1)[-1]):
            word = value.replace("${workspaceFolder}", str(folder))
            if "/" in word and "${" not in word and "://" not in word:
                out.append(Door(_absolute(word, folder), why))
    return out


def _jsonc(path: Path) -> object:
    try:
        text = door_text(path)
    except OSError:
        return None
    text = _COMMENTS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    try:
        return json.loads(_TRAILING_COMMAS.sub(r"\1", text))
    except ValueError:
        return None


def _tasks(data: object) -> Iterable[dict[str, object]]:
    if not isinstance(data, dict):
        return []
    tasks = data.get("tasks")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(tasks, list):
        return []
    return [t for t in tasks if isinstance(t, dict)]  # pyright: ignore[reportUnknownVariableType]
