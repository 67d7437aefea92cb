"""What a command runs besides itself: the program behind a wrapper (``timeout 5 curl``),
and options or operands that name a program to run or a file to write.

Both are read with GNU conventions (``shell.options``): ``timeout --sig KILL 5 curl`` is
``curl`` however ``--signal`` is abbreviated, and ``sort --compress-prog=x`` names a
program as surely as ``--compress-program`` does. A wrapper whose own arguments cannot be
read (a value decided at run time, ``env -S "…"``, ``flock -c``) hides its program, and
callers treat that as unknown.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from tether.permissions.shell import SimpleCommand, Word, effects
from tether.permissions.shell.options import Options, parse_options

BENIGN_WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "stdbuf", "ionice"})
"""Wrappers that run their command as it is: allow rules look through them."""
EVERY_WRAPPER = BENIGN_WRAPPERS | {
    *("env", "command", "builtin", "exec", "sudo", "doas", "xargs", "coproc"),
    *("setsid", "unbuffer", "chronic", "chroot", "flock", "nsenter", "unshare"),
}
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox"})

_HV = " help version"
# Each wrapper's options, and how many operands it takes before the command.
WRAPPERS: dict[str, tuple[Options, int]] = {
    "timeout": (
        Options.of(
            "sk", "signal= kill-after= foreground preserve-status verbose" + _HV, permute=False
        ),
        1,
    ),
    "nice": (Options.of("n", "adjustment=" + _HV, permute=False), 0),
    "ionice": (
        Options.of("cnpPu", "class= classdata= pid= pgid= uid= ignore" + _HV, permute=False),
        0,
    ),
    "stdbuf": (Options.of("ioe", "input= output= error=" + _HV, permute=False), 0),
    "nohup": (Options.of("", _HV, permute=False), 0),
    "time": (
        Options.of("fo", "format= output= append verbose portability quiet" + _HV, permute=False),
        0,
    ),
    "env": (
        Options.of(
            "uCS",
            "unset= chdir= split-string= ignore-environment null default-signal ignore-signal "
            "block-signal list-signal-handling debug" + _HV,
            permute=False,
        ),
        0,
    ),
    "sudo": (
        Options.of(
            "CDghpRrtTUu",
            "close-from= chdir= group= host= prompt= chroot= role= type= command-timeout= "
            "other-user= user= askpass background bell edit preserve-env login non-interactive "
            "preserve-groups remove-timestamp reset-timestamp shell stdin list validate" + _HV,
            permute=False,
        ),
        0,
    ),
    "doas": (Options.of("Cu", "", permute=False), 0),
    "xargs": (
        Options.of(
            "aEIdLnPs",
            "arg-file= delimiter= eof= replace= max-lines= max-args= max-procs= max-chars= "
            "process-slot-var= null interactive no-run-if-empty open-tty exit verbose "
            "show-limits" + _HV,
            attached="eil",
            permute=False,
        ),
        0,
    ),
    "chroot": (Options.of("", "userspec= groups= skip-chdir" + _HV, permute=False), 1),
    "flock": (
        Options.of(
            "wEc",
            "timeout= conflict-exit-code= command= shared exclusive unlock nonblock close "
            "no-fork verbose" + _HV,
            permute=False,
        ),
        1,
    ),
    "command": (Options.of("", "", permute=False), 0),
    "builtin": (Options.of("", "", permute=False), 0),
    "exec": (Options.of("a", "", permute=False), 0),
    "setsid": (Options.of("", "ctty fork wait" + _HV, permute=False), 0),
}


def strip_wrappers(words: Sequence[Word], wrappers: frozenset[str]) -> list[Word] | None:
    """The command after every leading wrapper in ``wrappers``; None when a wrapper's own
    arguments cannot be read."""
    rest = list(words)
    while rest and rest[0].value is not None and os.path.basename(rest[0].value) in wrappers:
        name = os.path.basename(rest[0].value)
        spec, positionals = WRAPPERS.get(name, (Options(permute=False), 0))
        parsed = parse_options(spec, rest[1:])
        if parsed.unknown is not None and name in WRAPPERS:
            return None
        if parsed.has("-S", "--split-string", "-c", "--command"):
            return None  # env -S and flock -c run a string
        operands = list(parsed.operands)
        if name == "flock" and len(operands) > 1 and operands[1].value in ("-c", "--command"):
            return None  # flock FILE -c COMMAND runs a string
        if name == "env":
            while operands and "=" in (operands[0].value or "") and operands[0].value:
                operands.pop(0)
        rest = operands[positionals:] if len(operands) > positionals else []
    return rest


def _mentions(args: Sequence[str], short: str, long: Sequence[str]) -> bool:
    """Is one of these options among ``args``, as getopt_long would read it?"""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if name and any(option.startswith(name) for option in long):
                return True
        elif arg.startswith("-") and len(arg) > 1 and any(c in short for c in arg[1:]):
            return True
    return False


# Options naming a program to run or a file to write (short letters, long names).
_ARG_RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rg": ("", ("pre", "hostname-bin")),
    "sort": ("o", ("output", "compress-program")),
    "tar": ("IF", ("to-command", "use-compress-program", "checkpoint-action", "info-script")),
    "less": ("k", ("lesskey-file", "lesskey-src")),
    "man": ("PH", ("pager", "html")),
    "rsync": ("e", ("rsh", "rsync-path")),
    "zip": ("T", ("unzip-command",)),
    "ssh": ("oF", ()),
    "scp": ("oFS", ()),
}
_GIT_GLOBAL = ("config-env", "exec-path", "git-dir", "work-tree", "namespace", "super-prefix")
_GIT_SUB_RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rebase": ("x", ("exec",)),
    "difftool": ("xt", ("extcmd", "tool")),
    "mergetool": ("t", ("tool",)),
    "grep": ("O", ("open-files-in-pager",)),
    "clone": ("u", ("upload-pack", "template", "config")),
    "fetch": ("", ("upload-pack",)),
    "pull": ("", ("upload-pack",)),
    "ls-remote": ("", ("upload-pack",)),
    "push": ("", ("receive-pack", "exec")),
    "archive": ("", ("exec", "output")),
    "commit": ("", ("template",)),
}
_GIT_ANY_RUNS = ("ext-diff", "output")
_GIT_RUN_SUBCOMMANDS = frozenset({"filter-branch", "filter-repo", "submodule", "bisect"})
_FIND_RUNS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


def _git_runs(args: Sequence[str]) -> bool:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-c", "-C") or _mentions([args[i]], "", _GIT_GLOBAL):
            return True  # configuration or a directory that decides what git runs
        i += 1
    if i >= len(args):
        return False
    sub, rest = args[i], args[i + 1 :]
    if sub in _GIT_RUN_SUBCOMMANDS and rest[:1] != ["status"]:
        return sub != "submodule" or rest[:1] in (["foreach"], ["update"], ["init"])
    short, long = _GIT_SUB_RUNS.get(sub, ("", ()))
    return _mentions(rest, short, (*long, *_GIT_ANY_RUNS))


def runs_through_args(words: Sequence[Word]) -> bool:
    """Does this command run a program, or write a file, named in its own arguments?"""
    if not words:
        return False
    name = os.path.basename(words[0].text)
    args = [w.text for w in words[1:]]
    if name in EVERY_WRAPPER - BENIGN_WRAPPERS or name in SHELLS or name in ("eval", "trap"):
        return True
    if name == "find":
        return any(a in _FIND_RUNS for a in args)
    if name == "git":
        return _git_runs(args)
    if name in ("sed", "awk", "gawk", "mawk"):
        # The script is code: `e`, `w`, system(), `print >` run or write what it names.
        found = effects(SimpleCommand(tuple(words)))
        return not found.read_only and not found.file_command
    short, long = _ARG_RUNS.get(name, ("", ()))
    if name == "tar" and args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # tar's old style: the first word is options
    return _mentions(args, short, long)
