"""A shell line that makes git run a program of the line's choosing asks, naming it.

Git runs what some configuration keys name (``git_exec.EXECUTING``): a hook folder, the
fsmonitor hook, pagers and editors, diff and merge drivers, filters, credential helpers,
``!`` aliases, included files. A line can set one for good (``git config KEY VALUE``,
``git config set``, ``--file F``, any scope) or for one run (``git -c KEY=VALUE``,
``--config-env``, ``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` and ``GIT_CONFIG_PARAMETERS`` in
the environment), and git also runs what some variables name (``GIT_SSH_COMMAND``,
``GIT_PAGER``, ``GIT_EXTERNAL_DIFF``…). Each of these asks the user every time, inside the
sandbox or not, with what it would run: an allow rule for ``git`` is not a decision to run
an arbitrary program through it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from tether.permissions.git_exec import executes
from tether.permissions.shell import Script, SimpleCommand, Word

GIT_PROGRAM_VARIABLES = frozenset(
    {
        *("GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"),
        *("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND"),
        *("GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL"),
        *("GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_DIFF_OPTS"),
    }
)
"""Variables whose value git runs, or that point git at other configuration or programs."""
SETTERS = frozenset({"export", "declare", "typeset", "local", "readonly", "env"})
CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment"})
CONFIG_MODES = frozenset({"--add", "--replace-all", "--append"})


def _assignment(text: str) -> tuple[str, str] | None:
    name, eq, value = text.partition("=")
    name = name.rstrip("+")
    if not eq or not name.replace("_", "a").isalnum():
        return None
    return name, value.strip("'\"")


def _variables(cmd: SimpleCommand) -> Iterable[tuple[str, str]]:
    for text in cmd.assignments:
        found = _assignment(text)
        if found is not None:
            yield found
    if cmd.words and cmd.words[0].value in SETTERS:
        for word in cmd.words[1:]:
            found = _assignment(word.text)
            if found is not None:
                yield found


def _from_environment(cmd: SimpleCommand) -> str | None:
    keys: dict[str, str] = {}
    values: dict[str, str] = {}
    for name, value in _variables(cmd):
        if name in GIT_PROGRAM_VARIABLES:
            return f"{name}={value} makes git run or read what it names"
        if name.startswith("GIT_CONFIG_KEY_"):
            keys[name.removeprefix("GIT_CONFIG_KEY_")] = value
        elif name.startswith("GIT_CONFIG_VALUE_"):
            values[name.removeprefix("GIT_CONFIG_VALUE_")] = value
    for index, key in keys.items():
        value = values.get(index)
        if executes(key, value):
            return _runs(key, value, "GIT_CONFIG_KEY_" + index)
    return None


def _runs(key: str, value: str | None, how: str) -> str:
    what = f" ({value})" if value else ""
    return f"{how} sets git's {key}, which git runs or reads{what}"


def _git_words(cmd: SimpleCommand) -> list[Word] | None:
    words = list(cmd.words)
    while words and words[0].value in ("env", "command", "exec", "nice", "nohup", "time"):
        words = words[1:]
        while words and (
            (words[0].value or "").startswith("-") or _assignment(words[0].text) is not None
        ):
            words = words[1:]
    if not words or os.path.basename(words[0].value or "") != "git":
        return None
    return words


def _from_git(words: Sequence[Word]) -> str | None:
    i = 1
    while i < len(words):
        text = words[i].value
        if text is None:
            return None  # decided at run time: the parser already asks
        if text == "-c" and i + 1 < len(words):
            key, _, value = (words[i + 1].value or words[i + 1].text).partition("=")
            if executes(key, value):
                return _runs(key, value, "git -c")
            i += 2
            continue
        if text.startswith("--config-env"):
            spec = text.partition("=")[2] or (
                words[i + 1].value or "" if i + 1 < len(words) else ""
            )
            key = spec.partition("=")[0]
            if executes(key):
                return _runs(key, None, "git --config-env")
        if not text.startswith("-"):
            return _from_config(words[i + 1 :]) if text == "config" else None
        i += 2 if text in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    return None


def _from_config(rest: Sequence[Word]) -> str | None:
    operands: list[str] = []
    i = 0
    while i < len(rest):
        text = rest[i].value or rest[i].text
        i += 1
        if text in CONFIG_VALUE_OPTIONS:
            i += 1
        elif text.startswith("-") and text not in CONFIG_MODES:
            if text.startswith(("--unset", "--get", "--list", "-l", "--remove", "--rename")):
                return None  # reads, or removes: nothing new runs
        elif not text.startswith("-"):
            operands.append(text)
    if operands[:1] == ["set"]:
        operands = operands[1:]
    elif operands[:1] in (["get"], ["list"], ["unset"], ["remove-section"], ["rename-section"]):
        return None
    if len(operands) >= 2 and executes(operands[0], operands[1]):
        return _runs(operands[0], operands[1], "git config")
    return None


def git_runs(script: Script) -> str | None:
    """Why the line makes git run a program of its choosing, or None."""
    for cmd in script.commands:
        why = _from_environment(cmd)
        words = _git_words(cmd)
        if why is None and words is not None:
            why = _from_git(words)
        if why is not None:
            return why
    return None
