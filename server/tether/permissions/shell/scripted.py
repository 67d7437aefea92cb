"""Programs whose arguments are a small language: ``find`` expressions, ``sed`` and ``awk``
scripts, ``jq`` filters. Read-only only when the program text cannot write, read files
the line does not name, or run anything."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tether.permissions.shell.model import Effects, Word, named, refused
from tether.permissions.shell.options import Options, parse_options
from tether.permissions.shell.sed import script_is_plain

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

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


def find(words: Sequence[Word]) -> Effects:
    i = 1
    while i < len(words) and _find_global(words[i].value or ""):
        if words[i].value == "-L":
            return refused("find -L follows symbolic links out of the paths it is given")
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
            return refused("a find expression decided at run time")
        if text in _FIND_UNSAFE:
            return refused(f"find {text} runs a program or writes a file")
        if text == "-follow":
            return refused("find -follow follows symbolic links out of the paths it is given")
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


def sed(words: Sequence[Word]) -> Effects:
    parsed = parse_options(_SED, words[1:])
    if parsed.unknown is not None:
        return refused(f"sed: {parsed.unknown}")
    if parsed.has("-f", "--file"):
        return refused("sed -f runs a script the line does not show")
    scripts = parsed.values("-e", "--expression")
    operands = list(parsed.operands)
    if not scripts:
        if not operands:
            return refused("sed without a script")
        scripts, operands = [operands[0]], operands[1:]
    if not all(s.static and script_is_plain(s.value or "") for s in scripts):
        return refused("the sed script writes or reads files or runs commands (w, r, e)")
    in_place = [v for name, v in parsed.options if name in ("-i", "--in-place")]
    if not in_place and not parsed.has("-i", "--in-place"):
        return Effects(True, reads=tuple(operands))
    suffix = next((v.value or "" for v in in_place if v is not None), "")
    understood = "/" not in suffix and bool(operands) and all(named(w) for w in operands)
    return refused("sed -i edits files", writes=tuple(operands), file_command=understood)


_AWK = Options.of(
    "fFvEeilW",
    "field-separator= assign= file= source= include= load= exec= help version",
    permute=False,
)
_AWK_RISKY = re.compile(r"system|getline|[|>@]")


def awk(words: Sequence[Word]) -> Effects:
    parsed = parse_options(_AWK, words[1:])
    risky = ("-f", "-E", "-i", "-l", "-W", "--file", "--include", "--load", "--exec")
    if parsed.unknown is not None or parsed.has(*risky):
        return refused("awk with these options runs a program file or extension")
    programs = parsed.values("-e", "--source")
    operands = list(parsed.operands)
    if not programs:
        if not operands:
            return refused("awk without a program")
        programs, operands = [operands[0]], operands[1:]
    if not all(p.static and not _AWK_RISKY.search(p.value or "") for p in programs):
        return refused("the awk program may write files or run commands (system, >, |, getline)")
    files = [w for w in operands if not _is_awk_assignment(w)]
    return Effects(True, reads=tuple(files))


def _is_awk_assignment(word: Word) -> bool:
    name, eq, _ = (word.value or "").partition("=")
    return bool(eq) and NAME.fullmatch(name) is not None


def jq(words: Sequence[Word]) -> Effects:
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
                return refused("a jq argument decided at run time could be an option")
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
            return refused("jq with -f or -L loads code from files")
        elif text == "--":
            operands += words[i:]
            break
        elif text.startswith("-") and text != "-":
            continue
        else:
            operands.append(word)
    if not operands:
        return refused("jq without a filter")
    program = operands[0].value
    if program is None or "import" in program or "include" in program:
        return refused("the jq filter is decided at run time or loads modules")
    files = [] if args_mode else operands[1:]
    return Effects(True, reads=(*reads, *files))
