"""The rule an "Allow always" answer saves for a Bash command: the narrowest prefix that
still covers what the command is for, read from its meaning (the shell parser), never
from its first word alone.

- Interpreters keep their module or script: ``python -m unittest -v`` saves
  ``Bash(python -m unittest:*)``, ``node scripts/build.js`` ``Bash(node scripts/build.js:*)``;
  inline code (``python -c``, ``node -e``, ``perl -e``) saves nothing.
- Runners and package managers keep their subcommand, and the script or package they run:
  ``npm run test:*``, ``cargo test:*``, ``uv run pytest:*``, ``npx eslint:*``.
- git keeps its subcommand (``git commit:*``); a destructive one saves nothing.
- Other programs keep their subcommand when they have subcommands (``docker ps:*``),
  else the program (``ls:*``); programs that delete or overwrite what their operands name
  (``rm``, ``mv``, ``chmod``…) save the exact command.
- A rule is never wider than the command's first two significant words (program, then
  subcommand, module or script; glue such as ``run`` or ``-m`` is kept but not counted),
  and never a bare interpreter, shell or package runner.
- No rule at all (None, and no "always" choice) for shells (``bash -c``), ``eval``,
  ``source``, ``sudo``, wrappers that run another program (``xargs``, ``env``, ``nice``,
  ``timeout``…), environment assignments, dynamic program names, and lines whose parts
  need different rules. Read-only parts of a line (``cd src &&``, ``| head``, the ``cat``
  of a heredoc commit message) need no rule and are skipped; when every other part
  yields the same rule, that rule is the answer. One rule per question keeps what the user
  approves visible in the question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tether.permissions.bash_destructive import is_destructive_git
from tether.permissions.bash_programs import BENIGN_WRAPPERS, EVERY_WRAPPER, SHELLS
from tether.permissions.bash_rules import writes_by_redirect
from tether.permissions.shell import SimpleCommand, command_effects, parse_script

_INTERPRETER = re.compile(
    r"(python|pypy)(\d+(\.\d+)?)?|node(js)?|ruby|perl|php|lua(jit)?|Rscript|julia|tsx|"
    r"ts-node|osascript|pwsh|powershell|groovy|scala|elixir|guile|racket|tclsh"
)
_INLINE_CODE = frozenset(
    {"-c", "-e", "-E", "-p", "-r", "--eval", "--print", "--require", "--import", "--loader"}
    | {"--experimental-loader", "-Command", "-EncodedCommand", "-l", "-M", "-x"}
)
"""Options whose value (or the rest of the line) is code, across interpreters."""
_INTERPRETER_FLAGS = frozenset(
    {"-u", "-B", "-E", "-s", "-S", "-I", "-O", "-OO", "-q", "-b", "-bb", "-P", "-v"}
    | {"--no-warnings", "--enable-source-maps", "--trace-warnings", "--test", "--watch"}
    | {"-w", "-W", "-X"}
)
_VALUE_FLAGS = frozenset({"-W", "-X"})
"""Interpreter flags that take a separate value (``-X dev``)."""
_MODULE_FLAGS = frozenset({"-m"})
_PACKAGE_RUNNERS = frozenset({"npx", "pnpx", "bunx", "uvx", "pipx"})
_RUNNERS = frozenset(
    {
        *("npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "uv", "poetry", "pipenv"),
        *("pdm", "hatch", "rye", "pip", "pip3", "gradle", "./gradlew", "mvn", "./mvnw"),
        *("dotnet", "mix", "bundle", "rake", "composer", "swift", "tox", "nox", "just"),
        *("make", "cmake", "ctest", "docker", "podman", "kubectl", "helm", "terraform"),
        *("gh", "conda", "brew", "rustup", "nix", "bazel", "buck2", "task", "git", "npx"),
        *("pnpx", "bunx", "uvx", "pipx", "turbo", "nx", "lerna", "corepack", "ansible"),
        *("ansible-playbook", "aws", "gcloud", "az", "systemctl", "apt", "apt-get"),
    }
)
"""Programs whose first operand is a subcommand."""
_RUNS_NEXT = {
    "npm": {"run", "run-script", "exec", "x"},
    "pnpm": {"run", "exec", "dlx"},
    "yarn": {"run", "exec", "dlx"},
    "bun": {"run", "x"},
    "deno": {"run", "task"},
    "uv": {"run", "tool", "pip", "python"},
    "poetry": {"run", "self"},
    "pipenv": {"run"},
    "pdm": {"run"},
    "hatch": {"run"},
    "rye": {"run"},
    "go": {"run", "mod", "tool", "work"},
    "docker": {"run", "exec", "compose", "image", "container", "network", "volume", "buildx"},
    "podman": {"run", "exec", "compose", "image", "container", "network", "volume"},
    "gh": {"pr", "issue", "repo", "run", "workflow", "release", "api", "gist", "auth"},
    "kubectl": {"get", "describe", "logs", "apply", "delete", "rollout", "config"},
    "git": {"stash", "remote", "submodule", "worktree", "notes", "bisect", "lfs"},
    "cargo": {"install"},
    "dotnet": {"run", "tool", "ef"},
    "pipx": {"run"},
    "conda": {"env"},
    "systemctl": {"--user"},
}
"""Subcommands whose next word says what actually runs (``npm run test``)."""
_EXACT_ONLY = frozenset(
    {
        *("rm", "rmdir", "mv", "dd", "chmod", "chown", "chgrp", "shred", "truncate", "ln"),
        *("kill", "pkill", "killall", "mkfs", "fdisk", "parted", "reboot", "shutdown"),
        *("tee", "cp", "install", "rsync", "scp", "curl", "wget"),
    }
)
"""Programs whose operands decide what they destroy or send: only the exact command."""
_NO_RULE = frozenset({"eval", "source", ".", "exec", "trap", "alias", "function"})
_CODE_AS_TEXT = frozenset({"awk", "gawk", "mawk", "sed", "find"})
"""Programs whose arguments are code (an awk program, ``sed e``, ``find -exec``)."""
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+/-]*")


_EXACT = "exact"
"""Marker: only the exact command line may be saved."""


def _quote(word: str) -> str | None:
    """A word as it can stand in a rule (rules split on spaces), None when it cannot."""
    if not word or any(c in word for c in " \t\n$`*?[](){}'\"\\;&|<>"):
        return None
    return word


def _rule(words: Sequence[str]) -> str | None:
    quoted = [_quote(w) for w in words]
    if any(q is None for q in quoted):
        return None
    return f"Bash({' '.join(q for q in quoted if q)}:*)"


def _interpreter(prefix: list[str], words: list[str]) -> str | None:
    """``prefix`` (a runner's words, if any), then an interpreter and its arguments."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        flag = words[i]
        if flag in _MODULE_FLAGS:
            return _rule([*prefix, *words[: i + 2]]) if i + 1 < len(words) else None
        if flag in _INLINE_CODE or flag.split("=", 1)[0] in _INLINE_CODE:
            return None
        if flag not in _INTERPRETER_FLAGS:
            return None  # an option we cannot read: its value might be code
        i += 2 if flag in _VALUE_FLAGS else 1
    if i >= len(words) or words[i] == "-":
        return None  # the REPL, or code on standard input
    return _rule([*prefix, *words[: i + 1]])


def _is_interpreter(name: str) -> bool:
    return _INTERPRETER.fullmatch(name.rsplit("/", 1)[-1]) is not None


def _runner(name: str, words: list[str]) -> str | None:
    if name in _PACKAGE_RUNNERS and name != "pipx":
        j = 1
        while j < len(words) and words[j] in ("-y", "--yes", "-q", "--quiet"):
            j += 1
        if j >= len(words) or not _WORD.fullmatch(words[j]):
            return None  # never a bare package runner
        return _rule(words[: j + 1])
    if len(words) < 2:
        return None if name == "git" else _rule(words)
    if words[1].startswith("-") and not (name == "systemctl" and words[1] == "--user"):
        return _EXACT if len(words) == 2 and name != "git" else None
    if not _WORD.fullmatch(words[1]):
        return None
    if words[1] not in _RUNS_NEXT.get(name, ()):
        return _rule(words[:2])
    if len(words) < 3 or not _WORD.fullmatch(words[2]):
        return None
    if _is_interpreter(words[2]) or words[2] in SHELLS:
        return None if words[2] in SHELLS else _interpreter(words[:2], words[2:])
    return _rule(words[:3])


def _one(cmd: SimpleCommand) -> str | None:
    if cmd.assignments or not cmd.words or cmd.words[0].value is None:
        return None
    words = list(cmd.argv)
    name = words[0]
    if name in SHELLS or name in _NO_RULE or name in ("sudo", "doas"):
        return None
    if name in EVERY_WRAPPER or name in BENIGN_WRAPPERS:
        return None
    if writes_by_redirect(cmd) or name in _EXACT_ONLY or name in _CODE_AS_TEXT:
        return _EXACT  # the program text, -exec or the operands decide what it does
    if _is_interpreter(name):
        return _interpreter([], words)
    if name in _RUNNERS:
        return _runner(name, words)
    return _rule(words[:1])


def suggest_bash_rule(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """The rule an "always" answer saves for ``command``; None when none is safe. ``env``:
    the variables of the shell that runs it, the session's caller's (None: this process's)."""
    script = parse_script(command)
    if script is None or script.hazard is not None or script.functions:
        return None
    if is_destructive_git(command):
        return None
    needed = [c for c in script.commands if not command_effects(c, script, env).read_only]
    if not needed:
        needed = list(script.commands[:1])
    rules = {_one(c) for c in needed}
    if len(rules) != 1:
        return None
    rule = rules.pop()
    if rule != _EXACT:
        return rule
    line = command.strip()
    if len(script.commands) != 1 or "\n" in line or not line:
        return None
    return f"Bash({line})"
