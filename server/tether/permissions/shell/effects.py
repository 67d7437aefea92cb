"""What one simple command does to files, as far as its words tell.

``effects(cmd)`` says whether the command only reads (changes nothing, runs nothing it does
not show), which paths it reads and writes, and — for the file commands acceptEdits may
allow (``mkdir``, ``touch``, ``mv``, ``cp``, ``rm``, ``rmdir``, ``sed -i``) — which paths it
creates, removes or copies. Where the paths point is the policy's business
(``bash_paths``); this module only reads the command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tether.core.environ import environ_of, is_session_variable
from tether.permissions.shell.git import analyse_git
from tether.permissions.shell.model import Effects, SimpleCommand, Word, named, refused
from tether.permissions.shell.options import Options, parse_options
from tether.permissions.shell.programs import FILE_COMMANDS, READERS, Program
from tether.permissions.shell.scripted import awk, find, jq, sed

__all__ = ["SINKS", "Effects", "effects"]

SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
"""Redirection targets that are not files the command changes."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOCAL = re.compile(r"[a-z_][a-z0-9_]*")


def effects(cmd: SimpleCommand, env: Mapping[str, str] | None = None) -> Effects:
    """``env``: the variables of the shell that runs the command, the session's caller's
    (None: this process's)."""
    reads: list[Word] = []
    writes: list[Word] = []
    for r in cmd.redirects:
        if r.reads and r.target is not None:
            reads.append(r.target)
        elif r.writes and r.target is not None and r.target.value not in SINKS:
            writes.append(r.target)
    own = _command(cmd, environ_of(env))
    reads_all = (*reads, *own.reads)
    writes_all = (*writes, *own.writes)
    if writes and own.read_only:
        return Effects(
            False, f"it writes {writes[0].text} through a redirection", reads_all, writes_all
        )
    return Effects(
        own.read_only,
        own.why,
        reads_all,
        writes_all,
        own.removes,
        own.copies,
        own.file_command,
        own.chdir,
    )


def _local_names(assignments: Sequence[str], env: Mapping[str, str]) -> bool:
    """Only shell-local variables (lowercase by convention, not from the environment):
    setting one changes no program's environment or lookup (PATH, IFS, LD_*…)."""
    names = [re.split(r"\+?=|\[", a, maxsplit=1)[0] for a in assignments]
    # A caller of the warm daemon brings its own variables of these names (proxies...).
    return all(_LOCAL.fullmatch(n) and n not in env and not is_session_variable(n) for n in names)


def _command(cmd: SimpleCommand, env: Mapping[str, str]) -> Effects:
    if not cmd.words:
        if _local_names(cmd.assignments, env):
            return Effects(True)
        return refused("it sets a variable programs or the shell read (PATH, IFS…)")
    if cmd.assignments:
        return refused("an environment assignment changes what the program does")
    name = cmd.words[0].value
    if name is None or cmd.words[0].glob:
        return refused("the program is decided at run time")
    words = cmd.words
    if name == "cd":
        return _cd(words, env)
    special = _SPECIAL.get(name)
    if special is not None:
        return special(words)
    if name in READERS:
        return _reader(name, READERS[name], words)
    if name in FILE_COMMANDS:
        return _file_command(name, FILE_COMMANDS[name], words)
    return refused(f"{name} is not a read-only command")


def _reader(name: str, prog: Program, words: Sequence[Word]) -> Effects:
    if prog.operands == "none" and not prog.path_options:
        # Text in, text out: only a literal unsafe option matters (`printf -v`).
        if any(w.value in prog.unsafe for w in words[1:]):
            return refused(f"{name} with these options changes shell state")
        return Effects(True)
    parsed = parse_options(prog.options, words[1:])
    if parsed.unknown is not None:
        return refused(f"{name}: {parsed.unknown}")
    reads: list[Word] = []
    for option, value in parsed.options:
        if option in prog.unsafe:
            return refused(f"{name} {option} writes a file, runs a program or reads unnamed files")
        if option in prog.follows:
            return refused(f"{name} {option} follows symbolic links out of the paths it is given")
        if option in prog.path_options and value is not None:
            reads.append(value)
    if name == "ls" and parsed.has("-R", "--recursive") and parsed.has("-L", "--dereference"):
        return refused("ls -RL follows symbolic links out of the paths it is given")
    operands = list(parsed.operands)
    if prog.operands == "pattern" and not parsed.has(*prog.pattern_options):
        operands = operands[1:]
    if prog.max_paths is not None and len(operands) > prog.max_paths:
        return refused(f"{name} writes its last operand")
    return Effects(True, reads=(*reads, *operands))


def _cd(words: Sequence[Word], env: Mapping[str, str]) -> Effects:
    operands = [w for w in words[1:] if not (w.value or "").startswith("-") or w.value == "-"]
    if len(operands) != 1:
        return refused("cd without one directory goes to the home directory")
    target = operands[0]
    if target.value == "-":
        return refused("cd - goes back to a directory the line does not name")
    relative = target.value is not None and not target.value.startswith(("/", "./", "../"))
    if relative and env.get("CDPATH"):
        return refused("cd may follow CDPATH out of the workspace")
    return Effects(True, reads=(target,), chdir=target)


_DATE = Options.of(
    "dfrs",
    "date= debug file= iso-8601 resolution rfc-email rfc-3339= reference= set= universal utc "
    "help version",
    attached="I",
)


def _date(words: Sequence[Word]) -> Effects:
    parsed = parse_options(_DATE, words[1:])
    if parsed.unknown is not None or parsed.has("-s", "--set"):
        return refused("date with these arguments sets the clock")
    if any(not (w.value or "").startswith("+") for w in parsed.operands):
        return refused("date with an operand other than +FORMAT sets the clock")
    return Effects(True, reads=tuple(parsed.values("-f", "--file", "-r", "--reference")))


def _hostname(words: Sequence[Word]) -> Effects:
    for word in words[1:]:
        text = word.value
        if text is None or not text.startswith("-") or text in ("-F", "-b") or "file" in text:
            return refused("hostname with these arguments sets the host name")
    return Effects(True)


def _command_builtin(words: Sequence[Word]) -> Effects:
    if len(words) > 1 and words[1].value in ("-v", "-V"):
        return Effects(True)
    return refused("command runs the program it names")


def _git(words: Sequence[Word]) -> Effects:
    verdict = analyse_git(words)
    return Effects(verdict.read_only, verdict.why, verdict.reads)


_TEE = Options.of("", "append ignore-interrupts output-error help version")


def _tee(words: Sequence[Word]) -> Effects:
    """tee writes every operand (the policy checks them like redirections)."""
    parsed = parse_options(_TEE, words[1:])
    operands = [w for w in parsed.operands if w.value not in SINKS]
    return refused("tee writes the files it names", writes=tuple(operands))


_SPECIAL = {
    "tee": _tee,
    "date": _date,
    "hostname": _hostname,
    "command": _command_builtin,
    "git": _git,
    "find": find,
    "sed": sed,
    "awk": awk,
    "gawk": awk,
    "mawk": awk,
    "jq": jq,
}


def _file_command(name: str, opts: Options, words: Sequence[Word]) -> Effects:
    parsed = parse_options(opts, words[1:])
    operands = list(parsed.operands)
    why = f"{name} changes files"
    if parsed.unknown is not None or not all(named(w) for w in operands):
        return refused(why, writes=tuple(operands))
    if name == "mkdir":
        return refused(why, writes=tuple(operands), file_command=bool(operands))
    if name == "touch":
        refs = tuple(parsed.values("-r", "--reference"))
        return refused(why, reads=refs, writes=tuple(operands), file_command=bool(operands))
    if name in ("rm", "rmdir"):
        risky = parsed.has("--no-preserve-root", "-p", "--parents")
        return refused(why, removes=tuple(operands), file_command=bool(operands) and not risky)
    target = parsed.values("-t", "--target-directory")
    suffix = parsed.values("-S", "--suffix")
    if target:
        sources, dest = operands, target[-1]
    elif len(operands) >= 2:
        sources, dest = operands[:-1], operands[-1]
    else:
        return refused(why, writes=tuple(operands))
    into = () if parsed.has("-T", "--no-target-directory") else tuple((s, dest) for s in sources)
    understood = named(dest) and not any("/" in (s.value or "") for s in suffix)
    if name == "mv":
        return refused(
            why, writes=(dest,), removes=tuple(sources), copies=into, file_command=understood
        )
    return refused(why, reads=tuple(sources), writes=(dest,), copies=into, file_command=understood)
