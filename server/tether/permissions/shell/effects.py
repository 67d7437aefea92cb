"""What one simple command does to files, as far as its words tell.

``effects(cmd)`` says whether the command only reads (changes nothing, runs nothing it does
not show), which paths it reads and writes, and — for the file commands acceptEdits may
allow (``mkdir``, ``touch``, ``mv``, ``cp``, ``rm``, ``rmdir``, ``sed -i``) — which paths it
creates, removes or copies. Where the paths point is the policy's business
(``bash_paths``); this module only reads the command line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tether.permissions.shell.git import analyse_git
from tether.permissions.shell.model import SimpleCommand, Word
from tether.permissions.shell.options import Options, parse_options
from tether.permissions.shell.programs import FILE_COMMANDS, READERS, Program
from tether.permissions.shell.sed import script_is_plain

SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
"""Redirection targets that are not files the command changes."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOCAL = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True)
class Effects:
    read_only: bool
    why: str | None = None
    """What makes the command more than a reader, in words for the user."""
    reads: tuple[Word, ...] = ()
    writes: tuple[Word, ...] = ()
    """Files created or changed (redirections, file commands)."""
    removes: tuple[Word, ...] = ()
    """Files deleted or moved away (never the workspace itself)."""
    copies: tuple[tuple[Word, Word], ...] = ()
    """``cp``/``mv`` source and destination (a directory receives ``source``'s name)."""
    file_command: bool = False
    """A file command whose every path is on the line (acceptEdits may allow it)."""
    chdir: Word | None = None


def _no(
    why: str,
    *,
    reads: tuple[Word, ...] = (),
    writes: tuple[Word, ...] = (),
    removes: tuple[Word, ...] = (),
    copies: tuple[tuple[Word, Word], ...] = (),
    file_command: bool = False,
) -> Effects:
    return Effects(False, why, reads, writes, removes, copies, file_command)


def effects(cmd: SimpleCommand) -> Effects:
    reads: list[Word] = []
    writes: list[Word] = []
    for r in cmd.redirects:
        if r.reads and r.target is not None:
            reads.append(r.target)
        elif r.writes and r.target is not None and r.target.value not in SINKS:
            writes.append(r.target)
    own = _command(cmd)
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


def _local_names(assignments: Sequence[str]) -> bool:
    """Only shell-local variables (lowercase by convention, not from the environment):
    setting one changes no program's environment or lookup (PATH, IFS, LD_*…)."""
    names = [re.split(r"\+?=|\[", a, maxsplit=1)[0] for a in assignments]
    return all(_LOCAL.fullmatch(n) and n not in os.environ for n in names)


def _command(cmd: SimpleCommand) -> Effects:
    if not cmd.words:
        if _local_names(cmd.assignments):
            return Effects(True)
        return _no("it sets a variable programs or the shell read (PATH, IFS…)")
    if cmd.assignments:
        return _no("an environment assignment changes what the program does")
    name = cmd.words[0].value
    if name is None or cmd.words[0].glob:
        return _no("the program is decided at run time")
    words = cmd.words
    special = _SPECIAL.get(name)
    if special is not None:
        return special(words)
    if name in READERS:
        return _reader(name, READERS[name], words)
    if name in FILE_COMMANDS:
        return _file_command(name, FILE_COMMANDS[name], words)
    return _no(f"{name} is not a read-only command")


def _reader(name: str, prog: Program, words: Sequence[Word]) -> Effects:
    if prog.operands == "none" and not prog.path_options:
        # Text in, text out: only a literal unsafe option matters (`printf -v`).
        if any(w.value in prog.unsafe for w in words[1:]):
            return _no(f"{name} with these options changes shell state")
        return Effects(True)
    parsed = parse_options(prog.options, words[1:])
    if parsed.unknown is not None:
        return _no(f"{name}: {parsed.unknown}")
    reads: list[Word] = []
    for option, value in parsed.options:
        if option in prog.unsafe:
            return _no(f"{name} {option} writes a file, runs a program or reads unnamed files")
        if option in prog.follows:
            return _no(f"{name} {option} follows symbolic links out of the paths it is given")
        if option in prog.path_options and value is not None:
            reads.append(value)
    if name == "ls" and parsed.has("-R", "--recursive") and parsed.has("-L", "--dereference"):
        return _no("ls -RL follows symbolic links out of the paths it is given")
    operands = list(parsed.operands)
    if prog.operands == "pattern" and not parsed.has(*prog.pattern_options):
        operands = operands[1:]
    if prog.max_paths is not None and len(operands) > prog.max_paths:
        return _no(f"{name} writes its last operand")
    return Effects(True, reads=(*reads, *operands))


def _cd(words: Sequence[Word]) -> Effects:
    operands = [w for w in words[1:] if not (w.value or "").startswith("-") or w.value == "-"]
    if len(operands) != 1:
        return _no("cd without one directory goes to the home directory")
    target = operands[0]
    if target.value == "-":
        return _no("cd - goes back to a directory the line does not name")
    relative = target.value is not None and not target.value.startswith(("/", "./", "../"))
    if relative and os.environ.get("CDPATH"):
        return _no("cd may follow CDPATH out of the workspace")
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
        return _no("date with these arguments sets the clock")
    if any(not (w.value or "").startswith("+") for w in parsed.operands):
        return _no("date with an operand other than +FORMAT sets the clock")
    return Effects(True, reads=tuple(parsed.values("-f", "--file", "-r", "--reference")))


def _hostname(words: Sequence[Word]) -> Effects:
    for word in words[1:]:
        text = word.value
        if text is None or not text.startswith("-") or text in ("-F", "-b") or "file" in text:
            return _no("hostname with these arguments sets the host name")
    return Effects(True)


def _command_builtin(words: Sequence[Word]) -> Effects:
    if len(words) > 1 and words[1].value in ("-v", "-V"):
        return Effects(True)
    return _no("command runs the program it names")


def _git(words: Sequence[Word]) -> Effects:
    verdict = analyse_git(words)
    return Effects(verdict.read_only, verdict.why, verdict.reads)


_FIND_VALUED = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-size",
        "-mtime",
        "-atime",
        "-ctime",
        "-mmin",
        "-amin",
        "-cmin",
        "-used",
        "-links",
        "-inum",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-fstype",
        "-context",
        "-regextype",
    ]
)
_FIND_FILES = frozenset(["-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"])
_FIND_UNSAFE = frozenset(
    ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]
)


def _find_global(text: str) -> bool:
    return text in ("-H", "-L", "-P", "-D") or (text.startswith("-O") and text[2:].isdigit())


def _find(words: Sequence[Word]) -> Effects:
    i = 1
    while i < len(words) and _find_global(words[i].value or ""):
        if words[i].value == "-L":
            return _no("find -L follows symbolic links out of the paths it is given")
        i += 2 if words[i].value == "-D" else 1
    starts: list[Word] = []
    while i < len(words):
        text = words[i].value
        if text is not None and (text.startswith("-") or text in ("(", ")", "!", ",")):
            break
        starts.append(words[i])
        i += 1
    reads = starts or [Word.literal(".")]
    while i < len(words):
        text = words[i].value
        i += 1
        if text is None:
            return _no("a find expression decided at run time")
        if text in _FIND_UNSAFE:
            return _no(f"find {text} runs a program or writes a file")
        if text == "-follow":
            return _no("find -follow follows symbolic links out of the paths it is given")
        is_newer_xy = text.startswith("-newer") and len(text) == 8
        if text in _FIND_FILES or (is_newer_xy and text[7] != "t"):
            if i < len(words):
                reads.append(words[i])
            i += 1
        elif text in _FIND_VALUED or is_newer_xy:
            i += 1
    return Effects(True, reads=tuple(reads))


_SED = Options.of(
    "efl",
    "expression= file= in-place line-length= null-data zero-terminated posix quiet silent "
    "regexp-extended sandbox separate unbuffered debug follow-symlinks binary help version",
    attached="i",
)


def _sed(words: Sequence[Word]) -> Effects:
    parsed = parse_options(_SED, words[1:])
    if parsed.unknown is not None:
        return _no(f"sed: {parsed.unknown}")
    if parsed.has("-f", "--file"):
        return _no("sed -f runs a script the line does not show")
    scripts = parsed.values("-e", "--expression")
    operands = list(parsed.operands)
    if not scripts:
        if not operands:
            return _no("sed without a script")
        scripts, operands = [operands[0]], operands[1:]
    if not all(s.static and script_is_plain(s.value or "") for s in scripts):
        return _no("the sed script writes or reads files or runs commands (w, r, e)")
    in_place = [v for name, v in parsed.options if name in ("-i", "--in-place")]
    if not in_place and not parsed.has("-i", "--in-place"):
        return Effects(True, reads=tuple(operands))
    suffix = next((v.value or "" for v in in_place if v is not None), "")
    understood = "/" not in suffix and bool(operands) and all(_named(w) for w in operands)
    return _no("sed -i edits files", writes=tuple(operands), file_command=understood)


_AWK = Options.of(
    "fFvEeilW",
    "field-separator= assign= file= source= include= load= exec= help version",
    permute=False,
)
_AWK_RISKY = re.compile(r"system|getline|[|>@]")


def _awk(words: Sequence[Word]) -> Effects:
    parsed = parse_options(_AWK, words[1:])
    risky = ("-f", "-E", "-i", "-l", "-W", "--file", "--include", "--load", "--exec")
    if parsed.unknown is not None or parsed.has(*risky):
        return _no("awk with these options runs a program file or extension")
    programs = parsed.values("-e", "--source")
    operands = list(parsed.operands)
    if not programs:
        if not operands:
            return _no("awk without a program")
        programs, operands = [operands[0]], operands[1:]
    if not all(p.static and not _AWK_RISKY.search(p.value or "") for p in programs):
        return _no("the awk program may write files or run commands (system, >, |, getline)")
    files = [w for w in operands if not _is_awk_assignment(w)]
    return Effects(True, reads=tuple(files))


def _is_awk_assignment(word: Word) -> bool:
    name, eq, _ = (word.value or "").partition("=")
    return bool(eq) and _NAME.fullmatch(name) is not None


def _jq(words: Sequence[Word]) -> Effects:
    reads: list[Word] = []
    operands: list[Word] = []
    args_mode = False
    i = 1
    while i < len(words):
        word = words[i]
        text = word.value
        i += 1
        if text is None:
            if word.text.startswith(("-", "$", "`")):
                return _no("a jq argument decided at run time could be an option")
            operands.append(word)
        elif text in ("--args", "--jsonargs"):
            args_mode = True
        elif text in ("--arg", "--argjson"):
            i += 2
        elif text in ("--slurpfile", "--rawfile"):
            reads += words[i + 1 : i + 2]
            i += 2
        elif text == "--indent":
            i += 1
        elif text in ("-f", "--from-file") or text.startswith("-L"):
            return _no("jq with -f or -L loads code from files")
        elif text == "--":
            operands += words[i:]
            break
        elif text.startswith("-") and text != "-":
            continue
        else:
            operands.append(word)
    if not operands:
        return _no("jq without a filter")
    program = operands[0].value
    if program is None or "import" in program or "include" in program:
        return _no("the jq filter is decided at run time or loads modules")
    files = [] if args_mode else operands[1:]
    return Effects(True, reads=(*reads, *files))


_SPECIAL = {
    "cd": _cd,
    "date": _date,
    "hostname": _hostname,
    "command": _command_builtin,
    "git": _git,
    "find": _find,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "jq": _jq,
}


def _named(word: Word) -> bool:
    """A path fixed by the line itself (a literal, or a pattern over the workspace)."""
    return word.value is not None and not word.pipe


def _file_command(name: str, opts: Options, words: Sequence[Word]) -> Effects:
    parsed = parse_options(opts, words[1:])
    operands = list(parsed.operands)
    why = f"{name} changes files"
    if parsed.unknown is not None or not all(_named(w) for w in operands):
        return _no(why, writes=tuple(operands))
    if name == "mkdir":
        return _no(why, writes=tuple(operands), file_command=bool(operands))
    if name == "touch":
        refs = tuple(parsed.values("-r", "--reference"))
        return _no(why, reads=refs, writes=tuple(operands), file_command=bool(operands))
    if name in ("rm", "rmdir"):
        risky = parsed.has("--no-preserve-root", "-p", "--parents")
        return _no(why, removes=tuple(operands), file_command=bool(operands) and not risky)
    target = parsed.values("-t", "--target-directory")
    suffix = parsed.values("-S", "--suffix")
    if target:
        sources, dest = operands, target[-1]
    elif len(operands) >= 2:
        sources, dest = operands[:-1], operands[-1]
    else:
        return _no(why, writes=tuple(operands))
    into = () if parsed.has("-T", "--no-target-directory") else tuple((s, dest) for s in sources)
    understood = _named(dest) and not any("/" in (s.value or "") for s in suffix)
    if name == "mv":
        return _no(
            why, writes=(dest,), removes=tuple(sources), copies=into, file_command=understood
        )
    return _no(why, reads=tuple(sources), writes=(dest,), copies=into, file_command=understood)
