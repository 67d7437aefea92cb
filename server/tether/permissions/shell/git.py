"""Which git command lines only read, and which files they read.

git reads its subcommand's options with parse-options, which takes any unambiguous prefix
of a long option, so an option is unsafe when its name is a prefix of an unsafe one
(``--out=`` is ``--output=``). Global options that point git somewhere else or set its
configuration (``-c``, ``-C``, ``--git-dir``, ``--exec-path``…) are never read-only.
``git diff`` compares two files outside any repository when given paths outside the work
tree, so the operands of the diff family are checked as paths (a revision name resolves
inside the workspace and passes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tether.permissions.shell.model import Word

SAFE_GLOBALS = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
        "--no-advice",
    }
)
VALUE_GLOBALS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})

# Subcommands that read, the long options that make them write or run something, the
# options naming a file they read, and whether operands may be files.
_DIFF_UNSAFE = ("output", "ext-diff", "output-directory")


@dataclass(frozen=True)
class _Sub:
    unsafe: tuple[str, ...] = ()
    path_options: tuple[str, ...] = ()
    short_paths: str = ""
    """Short options whose value is a file (``-O<orderfile>``)."""
    short_unsafe: str = ""
    """Short options that run a program (``git grep -O<pager>``)."""
    operands_are_paths: bool = True


_READERS: dict[str, _Sub] = {
    "status": _Sub(),
    "log": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "show": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "diff": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "whatchanged": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "shortlog": _Sub(("output",)),
    "diff-tree": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "diff-index": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "diff-files": _Sub(_DIFF_UNSAFE, ("orderfile",), "O"),
    "rev-parse": _Sub((), ("resolve-git-dir",)),
    "rev-list": _Sub(),
    "ls-files": _Sub((), ("exclude-from", "exclude-per-directory"), "X"),
    "ls-tree": _Sub(),
    "cat-file": _Sub(),
    "merge-base": _Sub(),
    "describe": _Sub(),
    "name-rev": _Sub(),
    "blame": _Sub((), ("contents", "ignore-revs-file"), "S"),
    "annotate": _Sub((), ("contents", "ignore-revs-file"), "S"),
    "grep": _Sub(("open-files-in-pager", "ext-grep"), ("file",), "f", "O"),
    "show-ref": _Sub(),
    "for-each-ref": _Sub(),
    "count-objects": _Sub(),
    "check-ignore": _Sub(),
    "check-attr": _Sub(),
    "var": _Sub(),
    "version": _Sub(),
    "help": _Sub(),
}
_BRANCH_LISTING = frozenset(
    {
        *("-a", "--all", "-r", "--remotes", "-l", "--list", "-v", "-vv", "--verbose"),
        *("--show-current", "--no-color", "--color", "--contains", "--no-contains"),
        *("--merged", "--no-merged", "--points-at", "--sort", "--format", "--column"),
        *("--no-column", "--abbrev", "--no-abbrev", "-i", "--ignore-case"),
    }
)
_TAG_LISTING = frozenset(
    {
        *("-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged"),
        *("--points-at", "--sort", "--format", "--column", "--no-column", "-i"),
        "--ignore-case",
    }
)
_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list"}
)
_CONFIG_WRITES = (
    "add",
    "unset",
    "unset-all",
    "replace-all",
    "rename-section",
    "remove-section",
    "edit",
)


@dataclass(frozen=True)
class GitVerdict:
    read_only: bool
    why: str | None = None
    reads: tuple[Word, ...] = ()


def _no(why: str) -> GitVerdict:
    return GitVerdict(False, why)


def _prefix_of(name: str, options: Sequence[str]) -> bool:
    return bool(name) and any(o.startswith(name) for o in options)


def subcommand(words: Sequence[Word]) -> tuple[int, str | None]:
    """The index of git's subcommand in ``words`` (``words[0]`` is git), and its name."""
    i = 1
    while i < len(words):
        text = words[i].value
        if text is None:
            return i, None
        if not text.startswith("-"):
            return i, text
        i += 2 if text in VALUE_GLOBALS else 1
    return i, None


def analyse_git(words: Sequence[Word]) -> GitVerdict:
    i, sub = subcommand(words)
    if sub is None and all(w.value in ("--version", "--help") for w in words[1:]):
        return GitVerdict(len(words) > 1)
    for word in words[1:i]:
        if word.value not in SAFE_GLOBALS:
            return _no(f"the git option {word.text} changes where git reads its setup")
    if sub is None:
        return _no("no git subcommand, or one decided at run time")
    rest = list(words[i + 1 :])
    if any(w.value is None and w.text.startswith(("-", "$", "`")) for w in rest):
        return _no("an argument decided at run time could be an option")
    if sub == "branch":
        return _listing(rest, _BRANCH_LISTING, "branch")
    if sub == "tag":
        return _listing(rest, _TAG_LISTING, "tag")
    if sub == "config":
        return _config(rest)
    if sub == "stash":
        ok = bool(rest) and rest[0].value in ("list", "show")
        return GitVerdict(True) if ok else _no("git stash changes the stash")
    if sub == "worktree":
        ok = bool(rest) and rest[0].value == "list"
        return GitVerdict(True) if ok else _no("git worktree changes worktrees")
    if sub == "reflog":
        ok = not rest or rest[0].value == "show" or (rest[0].value or "").startswith("-")
        return GitVerdict(True) if ok else _no("git reflog expire/delete writes")
    if sub == "remote":
        ok = not rest or rest[0].value in ("-v", "--verbose", "get-url")
        return GitVerdict(True) if ok else _no("git remote changes or contacts remotes")
    if sub == "symbolic-ref":
        operands = [w for w in rest if not (w.value or "").startswith("-")]
        return GitVerdict(True) if len(operands) <= 1 else _no("git symbolic-ref writes")
    spec = _READERS.get(sub)
    if spec is None:
        return _no(f"git {sub} is not a read-only git command")
    return _reader(sub, spec, rest)


def _reader(sub: str, spec: _Sub, rest: list[Word]) -> GitVerdict:
    reads: list[Word] = []
    i = 0
    after_dashes = False
    while i < len(rest):
        word = rest[i]
        text = word.value or ""
        i += 1
        if after_dashes or not text.startswith("-") or text == "-":
            if spec.operands_are_paths:
                reads.append(word)
            continue
        if text == "--":
            after_dashes = True
            continue
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if _prefix_of(name, spec.unsafe):
                return _no(f"git {sub} --{name} writes a file or runs a program")
            if _prefix_of(name, spec.path_options) and len(name) >= 2:
                if eq:
                    reads.append(Word.literal(value))
                elif i < len(rest):
                    reads.append(rest[i])
                    i += 1
            if sub in ("diff", "grep") and name == "no-index":
                pass  # operands are read as files either way
            continue
        flag = text[1:2]
        if any(c in spec.short_unsafe for c in text[1:]):
            return _no(f"git {sub} {text} runs a program")
        if flag in spec.short_paths:
            if len(text) > 2:
                reads.append(Word.literal(text[2:]))
            elif i < len(rest):
                reads.append(rest[i])
                i += 1
    return GitVerdict(True, reads=tuple(reads))


def _listing(rest: list[Word], listing: frozenset[str], sub: str) -> GitVerdict:
    options = [(w.value or "").split("=", 1)[0] for w in rest if (w.value or "").startswith("-")]
    has_operands = any(not (w.value or "").startswith("-") for w in rest)
    lists = "-l" in options or "--list" in options
    if all(o in listing for o in options) and (lists or not has_operands):
        return GitVerdict(True)
    return _no(f"git {sub} with these arguments creates, renames or deletes")


def _config(rest: list[Word]) -> GitVerdict:
    texts = [w.value or "" for w in rest]
    names = [t[2:].split("=", 1)[0] for t in texts if t.startswith("--")]
    if any(_prefix_of(n, _CONFIG_WRITES) for n in names):
        return _no("git config writes the configuration")
    reads: list[Word] = []
    for i, t in enumerate(texts):
        if t in ("-f", "--file") and i + 1 < len(rest):
            reads.append(rest[i + 1])
        elif t.startswith("--file="):
            reads.append(Word.literal(t.removeprefix("--file=")))
    operands = [
        t
        for i, t in enumerate(texts)
        if not t.startswith("-") and (i == 0 or texts[i - 1] not in ("-f", "--file"))
    ]
    if any(t in _CONFIG_READS for t in texts) or len(operands) <= 1:
        return GitVerdict(True, reads=tuple(reads))
    return _no("git config with a value sets it")
