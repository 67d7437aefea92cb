"""Instruction comments: a comment that addresses the agent, written in the file's own
comment syntax, in the spirit of Aider's ``AI!`` comments::

    # tether: make this async
    total = compute(rows)  // tether: handle an empty list
    <!-- tether: add a table of contents -->

The marker is ``tether:`` (any case) right after the comment opener. The code action "Tether:
do this" on such a line hands the instruction to the agent, which removes the comment as part
of its edit when the work is done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

Syntax = tuple[str, str]
"""A comment's opener and closer ("" for comments that run to the end of the line)."""

HASH: Syntax = ("#", "")
SLASHES: Syntax = ("//", "")
DASHES: Syntax = ("--", "")
SEMICOLON: Syntax = (";", "")
PERCENT: Syntax = ("%", "")
BLOCK: Syntax = ("/*", "*/")
HTML: Syntax = ("<!--", "-->")
QUOTE: Syntax = ('"', "")

_BY_LANGUAGE: dict[str, tuple[Syntax, ...]] = {}
for _syntax, _languages in (
    (
        (HASH,),
        "python shellscript sh bash zsh fish ruby perl r yaml toml makefile dockerfile cmake "
        "elixir nim julia powershell coffeescript nix crystal conf ini properties gitignore "
        "starlark bazel just",
    ),
    (
        (SLASHES, BLOCK),
        "c cpp objective-c objective-cpp java javascript javascriptreact typescript "
        "typescriptreact go rust swift kotlin scala csharp dart zig groovy jsonc proto "
        "solidity odin v glsl hlsl wgsl",
    ),
    ((SLASHES, HASH, BLOCK), "php"),
    ((HASH, SLASHES, BLOCK), "hcl terraform"),
    ((SLASHES, BLOCK), "scss less"),
    ((DASHES,), "lua sql haskell elm ada purescript idris"),
    ((SEMICOLON,), "lisp commonlisp clojure scheme racket fennel emacs-lisp elisp asm"),
    ((PERCENT,), "latex tex bibtex erlang matlab prolog"),
    ((QUOTE,), "vim"),
    ((BLOCK,), "css"),
    ((HTML,), "html xml markdown vue svelte astro xhtml svg"),
):
    for _language in _languages.split():
        _BY_LANGUAGE[_language] = _syntax

_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".sh": "sh", ".bash": "bash", ".zsh": "zsh",
    ".rb": "ruby", ".pl": "perl", ".r": "r", ".yml": "yaml", ".yaml": "yaml", ".toml": "toml",
    ".ex": "elixir", ".exs": "elixir", ".jl": "julia", ".nix": "nix", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".m": "objective-c", ".java": "java",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
    ".ts": "typescript", ".tsx": "typescriptreact", ".go": "go", ".rs": "rust",
    ".swift": "swift", ".kt": "kotlin", ".scala": "scala", ".cs": "csharp", ".dart": "dart",
    ".zig": "zig", ".php": "php", ".tf": "terraform", ".scss": "scss", ".less": "less",
    ".lua": "lua", ".sql": "sql", ".hs": "haskell", ".elm": "elm", ".el": "emacs-lisp",
    ".clj": "clojure", ".scm": "scheme", ".rkt": "racket", ".tex": "latex", ".erl": "erlang",
    ".vim": "vim", ".css": "css", ".html": "html", ".htm": "html", ".xml": "xml",
    ".md": "markdown", ".vue": "vue", ".svelte": "svelte",
}  # fmt: skip
_BY_NAME = {"Makefile": "makefile", "Dockerfile": "dockerfile", "CMakeLists.txt": "cmake"}


@dataclass(frozen=True)
class Instruction:
    """An instruction comment found on one line."""

    line: int
    """0-based line number."""
    text: str
    """What the comment asks for, e.g. "make this async"."""
    comment: str
    """The whole comment as written, e.g. "# tether: make this async"."""
    whole_line: bool
    """The comment is all the line holds (else it trails code)."""


def syntaxes(language_id: str | None, path: PurePath) -> tuple[Syntax, ...]:
    """The comment syntaxes of a file, by the editor's language id, else by its name."""
    language = (language_id or "").lower()
    if language not in _BY_LANGUAGE:
        language = _BY_NAME.get(path.name) or _BY_SUFFIX.get(path.suffix.lower(), "")
    return _BY_LANGUAGE.get(language, (HASH, SLASHES))


def _pattern(syntax: Syntax) -> re.Pattern[str]:
    opener, closer = syntax
    tail = rf"\s*{re.escape(closer)}" if closer else ""
    # Openers may repeat (";;", "##", "///").
    return re.compile(
        rf"(?P<comment>(?:{re.escape(opener)})+\s*tether\s*:\s*(?P<text>.*?){tail})\s*$",
        re.IGNORECASE,
    )


def find(line_text: str, line: int, found_in: tuple[Syntax, ...]) -> Instruction | None:
    """The instruction comment on a line, if it holds one."""
    for syntax in found_in:
        match = _pattern(syntax).search(line_text)
        if match is None or not match["text"].strip():
            continue
        before = line_text[: match.start("comment")]
        return Instruction(line, match["text"].strip(), match["comment"], not before.strip())
    return None


def in_lines(
    lines: list[str], first: int, last: int, language_id: str | None, path: PurePath
) -> list[Instruction]:
    """Instruction comments on lines ``first``..``last`` (0-based, inclusive)."""
    found_in = syntaxes(language_id, path)
    out: list[Instruction] = []
    for number in range(max(first, 0), min(last, len(lines) - 1) + 1):
        instruction = find(lines[number], number, found_in)
        if instruction is not None:
            out.append(instruction)
    return out
