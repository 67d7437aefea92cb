"""Every path a door names is a door: one conservative rule instead of per-command guesses.

A door file that runs things (an ``.envrc``, a git value that executes, VS Code's tasks,
settings and launch configurations, ``.npmrc``/``.yarnrc.yml``, a hook manager's
configuration, what ``.nvim.lua``/``.exrc``/``.dir-locals.el`` load) is cut into words at
whitespace, quotes, ``=``, ``:``, ``;``, ``(``, ``)``, ``|``, ``&``, ``<``, ``>``, ``$(``,
backticks and commas. A word is a door, relative to each base the caller gives (the file's
folder, the repository's top, a task's ``cwd``, the workspace root):

- when it looks like a file name (it has a ``/`` or an extension), whether it exists yet or
  not (an existing folder named with a ``/`` is a door whole);
- when it names an existing file, without either (``make`` beside a ``Makefile`` is not a
  file; ``check`` that is one is);
- a module ``-m pkg.mod`` runs ``pkg/mod.py`` (or the package's ``__init__``/``__main__``).

The words that cannot be paths here are skipped: with ``$`` (a variable), ``*`` or ``?``
(a pattern), ``://`` (an address), or an option (``-x``). What lies outside the workspace is
dropped by the caller. A file a door sources (``source``, ``.``, ``source_env``, ``dotenv``)
is read by the same rule, a few levels deep. This protects more than runs, on purpose.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

_SPLIT = re.compile(r"\$\(|[\s'\"=:;()|&<>`,\[\]{}]+")
_FILE_LIKE = re.compile(r"\.[A-Za-z0-9_+-]+$")


def words(text: str) -> list[str]:
    """The words of ``text``, cut at every shell, JSON and config separator."""
    return [w for w in _SPLIT.split(text) if w]


def _candidate(word: str) -> str | None:
    word = word.rstrip("/") if len(word) > 1 else word
    if not word or word.startswith("-") or word in (".", ".."):
        return None
    if "$" in word or "*" in word or "?" in word or "://" in word or "\\" in word:
        return None
    return word


def _module_paths(module: str) -> list[str]:
    if not re.fullmatch(r"[A-Za-z_][\w.]*", module):
        return []
    base = module.replace(".", "/")
    return [f"{base}.py", f"{base}/__init__.py", f"{base}/__main__.py"]


def named_paths(text: str, bases: Sequence[Path]) -> list[Path]:
    """The paths the words of ``text`` name (see the module's rule), for each base."""
    out: dict[Path, None] = {}
    cut = words(text)
    names: list[tuple[str, bool]] = []
    for i, raw in enumerate(cut):
        if raw == "-m" and i + 1 < len(cut):
            names += [(m, True) for m in _module_paths(cut[i + 1])]
        elif raw.startswith("-m") and len(raw) > 2:
            names += [(m, True) for m in _module_paths(raw[2:])]
        word = _candidate(raw)
        if word is not None:
            names.append((word, "/" in word or _FILE_LIKE.search(word) is not None))
    for word, file_like in names:
        for base in bases:
            path = Path(os.path.normpath(Path(word) if word.startswith("/") else base / word))
            if file_like:
                if not (os.path.isdir(path) and "/" not in word):
                    out[path] = None
            elif os.path.isfile(path):
                out[path] = None
            if word.startswith("/"):
                break
    return list(out)


def git_value_paths(value: str, base: Path) -> list[Path]:
    """The paths a git value that runs names (``!`` of an alias removed), from the top of
    the work tree, where git runs it."""
    return named_paths(value.lstrip().removeprefix("!"), [base])
