"""Where the door rule (``door_rule``) is applied: the files on the host that run things.

An ``.envrc`` and the files it sources (a few levels deep), VS Code's tasks (those that run
when the folder opens and those they depend on; an npm task's ``package.json`` script),
settings and launch files and ``.code-workspace`` files, ``.npmrc``/``.yarnrc.yml`` (and
Yarn's Plug'n'Play loader), hook managers' configurations, and what an editor's exrc file
loads. Git values that run are read in ``doors.py``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from tether.sandbox.door_rule import named_paths, words
from tether.sandbox.doors import Door, _jsonc, door_text  # pyright: ignore[reportPrivateUsage]

MAX_SOURCE_DEPTH = 3
_SOURCING = frozenset(
    {".", "source", "source_env", "source_env_if_exists", "dotenv", "dotenv_if_exists"}
)


def _read(path: Path) -> str:
    """A regular file's first ``MAX_DOOR_TEXT`` bytes (a FIFO or a device is no script)."""
    try:
        return door_text(path)
    except OSError:
        return ""


def script_doors(path: Path, bases: Sequence[Path], why: str, depth: int = 0) -> list[Door]:
    """What a shell script that runs on the host (an ``.envrc``, a sourced file) names, and
    the files it sources, read the same way."""
    text = _read(path)
    out: list[Door] = []
    for line in text.splitlines():
        found = named_paths(line, bases)
        out += [Door(p, why) for p in found]
        if depth < MAX_SOURCE_DEPTH and any(w in _SOURCING for w in words(line)):
            for sourced in found:
                if sourced.is_file() and sourced != path:
                    out += script_doors(sourced, [sourced.parent, *bases], why, depth + 1)
    return out


def text_doors(path: Path, bases: Sequence[Path], why: str) -> list[Door]:
    """What any door file names, word by word (package managers' and hook managers'
    configuration, what an editor's exrc file loads)."""
    return [Door(p, why) for p in named_paths(_read(path), bases)]


def _strings(data: object) -> Iterable[str]:
    stack: list[object] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():  # pyright: ignore[reportUnknownVariableType]
                stack.append(v)  # pyright: ignore[reportUnknownArgumentType]
                if isinstance(k, str) and "/" in k:  # a map from path to setting
                    yield k
        elif isinstance(value, list):
            stack += value  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(value, str):
            yield value


def _workspace_folder(text: str, folder: Path) -> str:
    return (
        text.replace("${workspaceFolder}", str(folder))
        .replace("${workspaceRoot}", str(folder))
        .replace("${fileWorkspaceFolder}", str(folder))
        .replace("${userHome}", "$")
    )


def json_doors(path: Path, folder: Path, why: str) -> list[Door]:
    """Every string of a VS Code settings or launch file, word by word, from ``folder``."""
    out: list[Door] = []
    for value in _strings(_jsonc(path)):
        out += [Door(p, why) for p in named_paths(_workspace_folder(value, folder), [folder])]
    return out


def _tasks_of(data: object) -> list[dict[str, object]]:
    if not isinstance(data, dict):
        return []
    tasks = data.get("tasks")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(tasks, dict):  # a .code-workspace file: {"tasks": {"tasks": [...]}}
        tasks = tasks.get("tasks")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(tasks, list):
        return []
    return [t for t in tasks if isinstance(t, dict)]  # pyright: ignore[reportUnknownVariableType]


def _depends(task: dict[str, object]) -> list[str]:
    raw = task.get("dependsOn")
    items: list[object] = [raw] if isinstance(raw, str | dict) else []
    if isinstance(raw, list):
        items = list(raw)  # pyright: ignore[reportUnknownArgumentType]
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            label = item.get("label") or item.get("task")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(label, str):
                out.append(label)
    return out


def _label(task: dict[str, object]) -> str | None:
    for key in ("label", "taskName", "script"):
        value = task.get(key)
        if isinstance(value, str):
            return value
    return None


def _npm_script(package_dir: Path, script: str, why: str) -> list[Door]:
    """The ``package.json`` that holds an npm task's script (its text is the command run),
    and what that script, and the scripts it runs, name."""
    out = [Door(package_dir / "package.json", why)]
    data = _jsonc(package_dir / "package.json")
    scripts = data.get("scripts") if isinstance(data, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(scripts, dict):
        return out
    texts: dict[str, str] = {str(k): v for k, v in scripts.items() if isinstance(v, str)}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    todo = [script, f"pre{script}", f"post{script}"]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in texts:
            continue
        seen.add(name)
        text = texts[name]
        out += [Door(p, why) for p in named_paths(text, [package_dir])]
        todo += [w for w in words(text) if w in texts]  # `npm run other` runs it too
    return out


def task_doors(tasks_file: Path, folder: Path, *, every: bool = False) -> list[Door]:
    """What VS Code runs on its own from a tasks file: the tasks that run when the folder
    opens and those they depend on (``every``: all of them), word by word from the task's
    ``cwd`` and the folder; an npm task's script in its ``package.json``."""
    tasks = _tasks_of(_jsonc(tasks_file))
    by_label = {label: t for t in tasks if (label := _label(t)) is not None}
    chosen: list[dict[str, object]] = []
    todo = [
        t
        for t in tasks
        if every
        or (
            isinstance(options := t.get("runOptions"), dict)
            and options.get("runOn") == "folderOpen"  # pyright: ignore[reportUnknownMemberType]
        )
    ]
    while todo:
        task = todo.pop()
        if any(task is c for c in chosen):
            continue
        chosen.append(task)
        todo += [by_label[d] for d in _depends(task) if d in by_label]
    why = f"VS Code runs it when the folder opens ({tasks_file})"
    out: list[Door] = []
    for task in chosen:
        options = task.get("options")
        cwd_raw = options.get("cwd") if isinstance(options, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        bases = [folder]
        if isinstance(cwd_raw, str):
            cwd = _workspace_folder(cwd_raw, folder)
            if "$" not in cwd:
                bases.insert(0, Path(os.path.normpath(folder / cwd)))
        for value in _strings(task):
            out += [Door(p, why) for p in named_paths(_workspace_folder(value, folder), bases)]
        script = task.get("script")
        if task.get("type") == "npm" and isinstance(script, str):
            where = task.get("path")
            package_dir = folder / where if isinstance(where, str) else folder
            out += _npm_script(Path(os.path.normpath(package_dir)), script, why)
    return out


PNP_FILES = (".pnp.cjs", ".pnp.js", ".pnp.loader.mjs")
"""Yarn Plug'n'Play's loader: every ``yarn`` and ``node`` run through it loads it."""


def vscode_doors(vscode: Path) -> list[Door]:
    """A ``.vscode`` folder's tasks, settings and launch configurations."""
    folder = vscode.parent
    out: list[Door] = []
    if (vscode / "tasks.json").is_file():
        out += task_doors(vscode / "tasks.json", folder)
    for name in ("settings.json", "launch.json"):
        if (vscode / name).is_file():
            why = f"VS Code runs or loads it, named by {vscode / name}"
            out += json_doors(vscode / name, folder, why)
    return out


def code_workspace_doors(path: Path) -> list[Door]:
    """A ``.code-workspace`` file's tasks, settings and launch configurations."""
    folder = path.parent
    why = f"VS Code runs or loads it, named by {path}"
    data = _jsonc(path)
    out = task_doors(path, folder)
    if isinstance(data, dict):
        for key in ("settings", "launch"):
            section = data.get(key)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            for value in _strings(section):  # pyright: ignore[reportUnknownArgumentType]
                out += [
                    Door(p, why) for p in named_paths(_workspace_folder(value, folder), [folder])
                ]
    return out


EDITOR_LOADERS = frozenset({".nvim.lua", ".nvimrc", ".exrc", ".dir-locals.el", ".dir-locals-2.el"})
"""Editors' project files whose contents load more files (``dofile``, ``source``,
``load-file``)."""
HOOK_CONFIGS = (
    *(".pre-commit-config.yaml", ".pre-commit-config.yml", "lefthook.yml", ".lefthook.yml"),
    *("lefthook.yaml", ".lefthook.yaml", "lefthook-local.yml", ".lefthook-local.yml"),
    *("lefthook.toml", ".lefthook.toml", ".overcommit.yml"),
)
PACKAGE_FILES = (".npmrc", ".yarnrc", ".yarnrc.yml")


def root_doors(root: Path) -> list[Door]:
    """At the top of a workspace root: package managers' and hook managers' configuration,
    word by word, and Yarn's loader when Yarn is configured."""
    out: list[Door] = []
    for name in PACKAGE_FILES:
        path = root / name
        if path.is_file():
            why = f"the package manager runs or loads what it names ({path})"
            out += text_doors(path, [root], why)
    if (root / ".yarnrc.yml").is_file() or (root / ".yarnrc").is_file():
        why = "Yarn's Plug'n'Play loader, which every yarn and node run loads"
        out += [Door(root / name, why) for name in PNP_FILES]
    for name in (".envrc", *EDITOR_LOADERS):
        out += entry_doors(root / name, root)
    out += hook_doors(root)
    for name in HOOK_CONFIGS:
        path = root / name
        if path.is_file():
            out += text_doors(path, [root], f"the git hooks run what it lists ({path})")
    for name in (".vscode", *(p.name for p in root.glob("*.code-workspace"))):
        if name == ".vscode" and (root / name).is_dir():
            out += vscode_doors(root / name)
        elif name.endswith(".code-workspace"):
            out += code_workspace_doors(root / name)
    return out


_BARE = re.compile(r"[A-Za-z0-9@_][A-Za-z0-9@._+-]*")
HOOK_FOLDERS = (".husky", ".husky/_", ".git/hooks", ".githooks")
MAX_HOOKS = 64


def hook_doors(root: Path) -> list[Door]:
    """What the git hooks of the workspace's own repository run: the paths their words name,
    and, since Husky's hooks put ``node_modules/.bin`` first on ``PATH`` (npm scripts do
    too), ``node_modules/.bin/<word>`` for every bare word (``npm``, ``npx``,
    ``lint-staged``)."""
    out: list[Door] = []
    for folder in HOOK_FOLDERS:
        try:
            hooks = [
                e.path
                for e in os.scandir(root / folder)
                if e.is_file() and not e.name.endswith(".sample")
            ][:MAX_HOOKS]
        except OSError:
            continue
        for hook in hooks:
            why = f"the git hook {hook} runs it"
            text = _read(Path(hook))
            out += [Door(p, why) for p in named_paths(text, [root])]
            bin_dir = root / "node_modules" / ".bin"
            bare = [w for w in dict.fromkeys(words(text)) if _BARE.fullmatch(w)]
            out += [Door(bin_dir / w, why) for w in bare]
    return out


def entry_doors(path: Path, root: Path) -> list[Door]:
    """A protected entry found in the workspace (``.envrc``, ``.vscode``, an editor's exrc
    file), read by the rule, from its folder and the workspace root."""
    name = path.name.casefold()
    bases = [path.parent, root]
    if name == ".envrc" and path.is_file():
        return script_doors(path, bases, f"direnv runs it when a shell enters the folder ({path})")
    if name == ".vscode" and path.is_dir() and path.parent != root:
        return vscode_doors(path)
    if name in EDITOR_LOADERS and path.is_file():
        return text_doors(path, bases, f"the editor loads it when the folder opens ({path})")
    return []
