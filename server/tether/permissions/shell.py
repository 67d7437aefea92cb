"""Shell command analysis: every simple command a Bash string would run, and a read-only verdict.

Built on ``bashlex`` (a port of bash's own grammar), never on ``shlex.split``: a command is
only as safe as the worst command hidden in it, and those hide after ``;``/``&&``/``|``, in
``$(...)``, backticks, ``<(...)``, subshells and blocks. When the parser cannot follow the
text (functions, ``case``, arithmetic, substitutions inside ``${...}`` or unquoted heredocs)
the answer is "cannot analyse" (None), which callers must treat as "not safe".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import bashlex  # pyright: ignore[reportMissingTypeStubs]
from bashlex.errors import ParsingError  # pyright: ignore[reportMissingTypeStubs]


@dataclass(frozen=True)
class Redirect:
    op: str
    """Operator with its file descriptor, e.g. ``>``, ``2>``, ``>>``, ``&>``, ``<<``."""
    target: str
    """File name, fd number (for ``>&2``) or heredoc delimiter."""


@dataclass(frozen=True)
class SimpleCommand:
    argv: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    text: str = ""
    """The command's own source text."""


class _Unanalysable(Exception):
    pass


@dataclass
class _Collector:
    source: str
    commands: list[SimpleCommand] = field(default_factory=lambda: list[SimpleCommand]())

    def visit(self, node: Any, inherited: tuple[Redirect, ...] = ()) -> None:
        kind: str = node.kind
        if kind == "function":
            raise _Unanalysable("function definition")
        if kind == "command":
            self._command(node, inherited)
            return
        if kind == "compound":
            # Redirections on `{ ...; } > f` or a loop apply to every command inside it.
            extra = tuple(self._redirect(r) for r in getattr(node, "redirects", []) or [])
            for child in node.list:
                self.visit(child, inherited + extra)
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            self.visit(node.command, inherited=())
            return
        if kind == "parameter" and re.search(r"\$\(|`", getattr(node, "value", "") or ""):
            raise _Unanalysable("command substitution inside ${...}")
        for child in getattr(node, "parts", []) or []:
            self.visit(child, inherited)

    def _command(self, node: Any, inherited: tuple[Redirect, ...]) -> None:
        argv: list[str] = []
        assignments: list[str] = []
        redirects: list[Redirect] = list(inherited)
        for part in node.parts:
            if part.kind == "word":
                argv.append(part.word)
            elif part.kind == "assignment":
                assignments.append(part.word)
            elif part.kind == "redirect":
                redirects.append(self._redirect(part))
                continue
            for sub in getattr(part, "parts", []) or []:
                self.visit(sub)
        start, end = node.pos
        self.commands.append(
            SimpleCommand(tuple(argv), tuple(assignments), tuple(redirects), self.source[start:end])
        )

    def _redirect(self, node: Any) -> Redirect:
        fd = getattr(node, "input", None)
        op = f"{fd if fd is not None else ''}{node.type}"
        output = node.output
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None and re.search(r"\$\(|`", heredoc.value or ""):
            # bash expands an unquoted heredoc body; bashlex leaves it as plain text.
            raise _Unanalysable("command substitution in a heredoc")
        if isinstance(output, int):
            return Redirect(op, str(output))
        for sub in getattr(output, "parts", []) or []:
            self.visit(sub)
        return Redirect(op, output.word)


# bashlex reads $'\x63url' as the word "$x63url" (and $"..." likewise), so the command
# bash would run is not the one we would match: treat ANSI-C and locale quoting as opaque.
_OPAQUE_QUOTING = re.compile(r"\$['\"]")


def parse_command(command: str) -> list[SimpleCommand] | None:
    """Every simple command in ``command`` (a substitution before the command that uses it);
    None when it cannot be analysed."""
    parsed = _parse_cached(command)
    return None if parsed is None else list(parsed)


@lru_cache(maxsize=1024)  # one call is checked several times (flags, rules, sandbox, display)
def _parse_cached(command: str) -> tuple[SimpleCommand, ...] | None:
    if all(not line.strip() or line.lstrip().startswith("#") for line in command.splitlines()):
        return ()
    if "\x00" in command or _OPAQUE_QUOTING.search(command):
        return None
    collector = _Collector(command)
    try:
        trees = cast(list[Any], cast(Any, bashlex).parse(command))
        for tree in trees:
            collector.visit(tree)
    except (_Unanalysable, ParsingError, NotImplementedError):
        return None
    except (AttributeError, IndexError, TypeError, ValueError, AssertionError, RecursionError):
        return None  # bashlex has rough edges on odd input; not analysable is the safe answer
    return tuple(collector.commands)


READ_ONLY_COMMANDS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "pwd",
        "echo",
        "printf",
        "grep",
        "rg",
        "find",
        "which",
        "file",
        "stat",
        "du",
        "df",
        "tree",
        "sort",
        "uniq",
        "cut",
        "diff",
        "true",
        "false",
        "test",
        "[",
        "git",
        "cd",
        "basename",
        "dirname",
        "realpath",
    }
)
_FIND_ACTIONS = re.compile(r"^-(exec|execdir|delete|ok|okdir|fprint|fprint0|fprintf|fls)$")
_GIT_READ_ONLY = frozenset({"status", "log", "diff", "show", "rev-parse", "branch"})
_BRANCH_LISTING = frozenset(
    {
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-l",
        "--list",
        "-v",
        "-vv",
        "--verbose",
        "--show-current",
        "--no-color",
        "--color",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--column",
        "--no-column",
        "--abbrev",
        "--no-abbrev",
        "-i",
        "--ignore-case",
    }
)


def _options(argv: tuple[str, ...]) -> list[str]:
    return [a for a in argv[1:] if a.startswith("-")]


def _positionals(argv: tuple[str, ...]) -> list[str]:
    return [a for a in argv[1:] if not a.startswith("-")]


def _git_is_read_only(argv: tuple[str, ...]) -> bool:
    # Global options (-c, -C, --exec-path...) can run arbitrary programs: none allowed.
    if len(argv) < 2 or argv[1] not in _GIT_READ_ONLY:
        return False
    if any(a.startswith("--output") or a.startswith("--ext-diff") for a in argv[2:]):
        return False
    if argv[1] != "branch":
        return True
    opts = [a.split("=", 1)[0] for a in argv[2:] if a.startswith("-")]
    listing = "-l" in opts or "--list" in opts
    has_args = any(not a.startswith("-") for a in argv[2:])
    return all(o in _BRANCH_LISTING for o in opts) and (listing or not has_args)


def _args_are_read_only(argv: tuple[str, ...]) -> bool:
    name = argv[0]
    opts = _options(argv)
    if name == "find":
        return not any(_FIND_ACTIONS.match(a) for a in argv[1:])
    if name == "git":
        return _git_is_read_only(argv)
    if name == "sort":  # -o FILE writes; --compress-program runs a program
        return not any(
            o.startswith(("--output", "--compress-program"))
            or (not o.startswith("--") and "o" in o)
            for o in opts
        )
    if name == "uniq":  # `uniq IN OUT` writes OUT
        return len(_positionals(argv)) <= 1
    if name == "tree":  # -o FILE writes; -R with -H writes an HTML file per directory
        return not any(o in ("-o", "-R") or o.startswith("--fromfile") for o in opts)
    if name == "rg":  # --pre runs a program on every file
        return not any(o.startswith("--pre") for o in opts)
    if name == "file":  # -C compiles a magic file to disk
        return not any(o in ("-C", "--compile") for o in opts)
    return True


def _redirect_is_read_only(r: Redirect) -> bool:
    if ">" not in r.op:
        return True  # input redirection, heredoc, here-string
    if r.op.endswith(">&") and r.target.isdigit():
        return True  # fd duplication such as 2>&1
    return r.target == "/dev/null"


def is_read_only_simple(cmd: SimpleCommand) -> bool:
    if cmd.assignments or not cmd.argv:
        return False  # VAR=... can change what a command does (PAGER, LD_PRELOAD, GIT_*)
    if cmd.argv[0] not in READ_ONLY_COMMANDS:
        return False
    return _args_are_read_only(cmd.argv) and all(_redirect_is_read_only(r) for r in cmd.redirects)


@lru_cache(maxsize=512)  # asked several times per call (flags, permissions), parsing is not free
def is_read_only_command(command: str) -> bool:
    """True only when every command inside ``command`` is known not to change anything."""
    commands = parse_command(command)
    if not commands:
        return False
    return all(is_read_only_simple(c) for c in commands)
