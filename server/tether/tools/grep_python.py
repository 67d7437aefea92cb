"""Grep without ripgrep: the same answers from ``re`` and a gitignore-aware walk.

It mirrors what ``rg`` does with the flags Grep passes (see ``grep.py``): hidden files are
searched, symlinks are not followed, files with a NUL byte are skipped, ``--glob`` overrides
beat ignore files and ``--type``, a path given explicitly is searched as is, lines longer than
500 bytes are replaced by ripgrep's placeholder, and in multiline mode a count is the number
of matches only when the pattern can cross a line break (else matching lines, as rg does).
The structures here are shared by both backends; rendering lives in ``grep.py``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pathspec import GitIgnoreSpec

from tether.core.files import read_regular
from tether.errors import ToolError
from tether.tools.walk import Prefilter, WalkedFile, walk_files

OutputMode = Literal["content", "files_with_matches", "count"]
VCS_DIRS = (".git", ".svn", ".hg", ".bzr")
IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
MAX_COLUMNS = 500
OMITTED_MATCH = "[Omitted long matching line]"
OMITTED_CONTEXT = "[Omitted long context line]"

# ripgrep 13's built-in definitions for the common types (``rg --type-list``).
TYPE_GLOBS: dict[str, str] = {
    "c": "*.[chH] *.[chH].in *.cats",
    "cpp": (
        "*.[ChH] *.[ChH].in *.[ch]pp *.[ch]pp.in *.[ch]xx *.[ch]xx.in *.cc *.cc.in *.hh "
        "*.hh.in *.inl"
    ),
    "cs": "*.cs",
    "css": "*.css *.scss",
    "docker": "*Dockerfile*",
    "go": "*.go",
    "h": "*.h *.hpp",
    "html": "*.ejs *.htm *.html",
    "java": "*.java *.jsp *.jspx *.properties",
    "js": "*.js *.jsx *.vue",
    "json": "*.json composer.lock",
    "jsonl": "*.jsonl",
    "kotlin": "*.kt *.kts",
    "lua": "*.lua",
    "make": (
        "*.mak *.mk [Gg][Nn][Uu]makefile [Mm]akefile [Gg][Nn][Uu]makefile.am "
        "[Gg][Nn][Uu]makefile.in [Mm]akefile.am [Mm]akefile.in"
    ),
    "md": "*.markdown *.md *.mdown *.mkdn",
    "markdown": "*.markdown *.md *.mdown *.mkdn",
    "php": "*.php *.php3 *.php4 *.php5 *.phtml",
    "py": "*.py",
    "ruby": "*.gemspec *.rb *.rbw .irbrc Gemfile Rakefile config.ru",
    "rust": "*.rs",
    "scala": "*.sbt *.scala",
    "sh": (
        "*.bash *.bashrc *.csh *.cshrc *.ksh *.kshrc *.sh *.tcsh *.zsh .bash_login "
        ".bash_logout .bash_profile .bashrc .cshrc .kshrc .login .logout .profile "
        ".tcshrc .zlogin .zlogout .zprofile .zshenv .zshrc bash_login bash_logout "
        "bash_profile bashrc profile zlogin zlogout zprofile zshenv zshrc"
    ),
    "sql": "*.psql *.sql",
    "swift": "*.swift",
    "toml": "*.toml Cargo.lock",
    "ts": "*.ts *.tsx",
    "txt": "*.txt",
    "xml": "*.dtd *.rng *.sch *.xhtml *.xjb *.xml *.xml.dist *.xsd *.xsl *.xslt",
    "yaml": "*.yaml *.yml",
    "zig": "*.zig",
}

_POSIX_CLASSES = {
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:alnum:]": "a-zA-Z0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:space:]": r"\s",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:word:]": r"\w",
    "[:punct:]": r"!-/:-@\[-`{-~",
}


@dataclass(frozen=True)
class GrepQuery:
    pattern: str
    root: Path
    """A directory to walk, or one file to search as is."""
    mode: OutputMode
    before: int = 0
    after: int = 0
    ignore_case: bool = False
    file_type: str | None = None
    globs: tuple[str, ...] = ()
    multiline: bool = False


@dataclass(frozen=True)
class GrepLine:
    number: int
    text: str
    is_match: bool


@dataclass
class FileHits:
    path: Path
    mtime: float
    count: int = 0
    lines: list[GrepLine] = field(default_factory=lambda: list[GrepLine]())


def translate_regex(pattern: str) -> str:
    """ripgrep (Rust) syntax -> Python ``re``, for the differences models actually use."""
    for posix, cls in _POSIX_CLASSES.items():
        pattern = pattern.replace(posix, cls)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(r"\Z" if nxt == "z" else c + nxt)
            i += 2
            continue
        if pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def can_match_newline(pattern: str, dotall: bool) -> bool:
    """Whether a match may contain a line break (rg then counts matches, not lines)."""
    if "\n" in pattern or re.search(r"\\(n|s|W|D|x0?[aA]\b|x\{0*[aA]\})", pattern):
        return True
    return "[^" in pattern or (dotall and re.search(r"(?<!\\)\.", pattern) is not None)


def compile_query(q: GrepQuery) -> re.Pattern[str]:
    if not q.multiline and re.search(r"(?<!\\)\\n|\n", q.pattern):
        raise ToolError("The pattern contains a line break; set multiline to true to match one.")
    flags = re.MULTILINE | (re.IGNORECASE if q.ignore_case else 0)
    flags |= re.DOTALL if q.multiline else 0
    try:
        return re.compile(translate_regex(q.pattern), flags)
    except re.error as e:
        raise ToolError(f"Invalid regular expression {q.pattern!r}: {e}.")


MAX_GLOB_ALTERNATIVES = 1024


def expand_braces(glob: str) -> list[str]:
    """``*.{js,ts}`` -> ``*.js``, ``*.ts`` (ripgrep's globs have braces, gitignore has not);
    more than ``MAX_GLOB_ALTERNATIVES`` (``{a,b}`` ten times over is 1,024) is refused."""
    out = _expand(glob, 0)
    if len(out) > MAX_GLOB_ALTERNATIVES:
        raise ToolError(_TOO_MANY_ALTERNATIVES.format(glob=glob[:80]))
    return out


_TOO_MANY_ALTERNATIVES = (
    "The glob {glob!r} expands to more than 1024 alternatives (braces nested or repeated "
    "too often). Simplify it."
)


def _expand(glob: str, level: int) -> list[str]:
    if level > 64:  # brace groups one after another: each is a level of recursion
        raise ToolError(_TOO_MANY_ALTERNATIVES.format(glob=glob[:80]))
    depth, start = 0, -1
    for i, c in enumerate(glob):
        if c == "{":
            depth += 1
            start = i if depth == 1 else start
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                head, body, tail = glob[:start], glob[start + 1 : i], glob[i + 1 :]
                out: list[str] = []
                for alt in _split_top(body):
                    out += _expand(head + alt + tail, level + 1)
                    if len(out) > MAX_GLOB_ALTERNATIVES:
                        raise ToolError(_TOO_MANY_ALTERNATIVES.format(glob=glob[:80]))
                return out
    return [glob]


def _split_top(body: str) -> list[str]:
    parts, depth, cur = list[str](), 0, ""
    for c in body:
        depth += (c == "{") - (c == "}")
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return [*parts, cur]


def override_filter(globs: tuple[str, ...]) -> Prefilter:
    """ripgrep's ``--glob`` semantics: a match decides, gitignore-style, last one wins."""
    expanded = [x for g in globs for x in expand_braces(g)]
    spec = GitIgnoreSpec.from_lines([f"!{d}" for d in VCS_DIRS] + expanded)
    whitelists = sum(1 for g in expanded if not g.startswith("!"))

    def decide(rel: str, is_dir: bool) -> bool | None:
        hit = spec.check_file(rel + "/" if is_dir else rel).include
        if hit is None and whitelists and not is_dir:
            return False
        return hit

    return decide


def type_filter(file_type: str) -> tuple[str, ...]:
    globs = TYPE_GLOBS.get(file_type)
    if globs is None:
        known = ", ".join(sorted(TYPE_GLOBS))
        raise ToolError(f"Unknown file type {file_type!r}. Known types: {known}.")
    return tuple(globs.split())


def _omit(line: str, has_terminator: bool, placeholder: str) -> str:
    if len(line) * 4 + 1 <= MAX_COLUMNS:
        return line
    size = len(line.encode("utf-8", "surrogatepass")) + (1 if has_terminator else 0)
    return placeholder if size > MAX_COLUMNS else line


def _match_lines(
    text: str, lines: list[str], rx: re.Pattern[str], q: GrepQuery
) -> tuple[set[int], int]:
    """0-based indexes of lines that take part in a match, and rg's count for the file."""
    if not q.multiline:
        hit = {i for i, line in enumerate(lines) if rx.search(line)}
        return hit, len(hit)
    breaks = [i for i, ch in enumerate(text) if ch == "\n"]
    hit: set[int] = set()
    matches = 0
    for m in rx.finditer(text):
        first = bisect_left(breaks, m.start())
        if first >= len(lines):
            continue  # an empty match after the final line break
        last = bisect_left(breaks, max(m.start(), m.end() - 1))
        hit.update(range(first, min(last, len(lines) - 1) + 1))
        matches += 1
    count = matches if can_match_newline(q.pattern, q.multiline) else len(hit)
    return hit, count


def search_file(path: Path, mtime: float, rx: re.Pattern[str], q: GrepQuery) -> FileHits | None:
    try:
        data = read_regular(path)  # walked as a file; a FIFO swapped in is skipped, not waited on
    except OSError:
        return None
    if b"\x00" in data:
        return None
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = text.split("\n")
    ends_with_break = lines[-1] == ""
    if ends_with_break:
        lines.pop()
    hit, count = _match_lines(text, lines, rx, q)
    if not hit:
        return None
    result = FileHits(path, mtime, count)
    if q.mode != "content":
        return result
    shown: set[int] = set()
    for i in hit:
        shown.update(range(max(0, i - q.before), min(len(lines), i + q.after + 1)))
    for i in sorted(shown):
        terminated = i < len(lines) - 1 or ends_with_break
        placeholder = OMITTED_MATCH if i in hit else OMITTED_CONTEXT
        result.lines.append(GrepLine(i + 1, _omit(lines[i], terminated, placeholder), i in hit))
    return result


def candidate_files(q: GrepQuery) -> list[WalkedFile]:
    if q.root.is_file():
        return [WalkedFile(q.root, q.root.name, q.root.stat().st_mtime)]
    types = type_filter(q.file_type) if q.file_type else None

    def by_type(name: str) -> bool:
        return types is None or any(fnmatchcase(name, g) for g in types)

    return list(
        walk_files(
            q.root,
            ignore_names=IGNORE_FILES,
            prefilter=override_filter(q.globs),
            file_filter=by_type if types else None,
            include_symlinks=False,
        )
    )


def search_python(q: GrepQuery) -> list[FileHits]:
    """Every file with a match, in walk order (blocking: run it in a thread)."""
    rx = compile_query(q)
    results: list[FileHits] = []
    for f in candidate_files(q):
        hits = search_file(f.path, f.mtime, rx, q)
        if hits is not None:
            results.append(hits)
    return results
