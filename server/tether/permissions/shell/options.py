"""Command-line options read the way GNU getopt_long reads them.

An option that writes a file or runs a program must be recognised however it is spelled:
``-o out``, ``-oout``, ``-uo out`` (bundled), ``--output out``, ``--output=out``, and any
unambiguous prefix (``--out=``, ``--compress-prog``). A program's table lists its options;
the reader resolves a long prefix against it exactly as getopt_long does (an exact name
wins, a unique prefix stands for its option, an ambiguous one is an error the program
would stop on).

Tables may be incomplete in one direction only: every option that takes a value, writes,
runs something or names a file must be listed; a short option missing from the table is
read as a flag and a missing long option as an unknown one. Either way the reader can
only see more operands than the program would, never fewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tether.permissions.shell.model import Word


@dataclass(frozen=True)
class Options:
    """How one program reads its command line."""

    valued: str = ""
    """Short options that take a value (``-o FILE`` or ``-oFILE``)."""
    attached: str = ""
    """Short options with an optional value, which can only be attached (``-w32``)."""
    long: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Long options without a value (``--color`` of ``--color[=WHEN]`` included)."""
    long_valued: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Long options with a required value (``--output FILE`` or ``--output=FILE``)."""
    permute: bool = True
    """GNU order: options may follow operands. False: the first operand ends them."""

    @classmethod
    def of(cls, valued: str = "", long: str = "", *, attached: str = "", permute: bool = True):
        """``long`` is space-separated; a trailing ``=`` marks a required value."""
        names = long.split()
        return cls(
            valued,
            attached,
            frozenset(n for n in names if not n.endswith("=")),
            frozenset(n[:-1] for n in names if n.endswith("=")),
            permute,
        )

    def resolve(self, name: str) -> str | None:
        """The long option ``name`` stands for; None when unknown or ambiguous."""
        if name in self.long or name in self.long_valued:
            return name
        found = [n for n in (*self.long, *self.long_valued) if n.startswith(name)]
        return found[0] if len(found) == 1 else None


@dataclass
class Parsed:
    options: list[tuple[str, Word | None]] = field(
        default_factory=lambda: list[tuple[str, Word | None]]()
    )
    """``("-o", value)`` or ``("--output", value)``; value None for a flag."""
    operands: list[Word] = field(default_factory=lambda: list[Word]())
    unknown: str | None = None
    """Why some word could not be read (decided at run time, ambiguous, missing value)."""

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[Word]:
        return [v for name, v in self.options if name in names and v is not None]


def _could_be_option(word: Word) -> bool:
    """Might a word decided at run time expand to ``--output=…``? Not when it starts with
    a literal character other than ``-``."""
    first = word.text[:1]
    return not first or first in "-$`{\\"


def parse_options(spec: Options, words: Sequence[Word]) -> Parsed:
    """Read ``words`` (the arguments, without the program name) as ``spec`` says."""
    out = Parsed()
    i = 0
    only_operands = False
    while i < len(words):
        word = words[i]
        i += 1
        text = word.value
        if only_operands or word.pipe:
            out.operands.append(word)
            continue
        if text is None:
            if _could_be_option(word):
                out.unknown = out.unknown or f"`{word.text}` could expand to an option"
            out.operands.append(word)
            if not spec.permute:
                only_operands = True
            continue
        if text == "--":
            only_operands = True
        elif text.startswith("--"):
            i = _long(spec, words, i, text[2:], out)
        elif text.startswith("-") and text != "-":
            i = _short(spec, words, i, text[1:], out)
        else:
            out.operands.append(word)
            if not spec.permute:
                only_operands = True
    return out


def _long(spec: Options, words: Sequence[Word], i: int, body: str, out: Parsed) -> int:
    name, eq, inline = body.partition("=")
    resolved = spec.resolve(name)
    if resolved is None:
        out.unknown = out.unknown or f"unknown or ambiguous option --{name}"
        out.options.append((f"--{name}", Word.literal(inline) if eq else None))
        return i
    if resolved in spec.long_valued:
        if eq:
            value: Word | None = Word.literal(inline)
        elif i < len(words):
            value, i = words[i], i + 1
        else:
            out.unknown = out.unknown or f"--{resolved} needs a value"
            value = None
        out.options.append((f"--{resolved}", value))
        return i
    out.options.append((f"--{resolved}", Word.literal(inline) if eq else None))
    return i


def _short(spec: Options, words: Sequence[Word], i: int, bundle: str, out: Parsed) -> int:
    for j, ch in enumerate(bundle):
        rest = bundle[j + 1 :]
        if ch in spec.valued:
            if rest:
                value: Word | None = Word.literal(rest)
            elif i < len(words):
                value, i = words[i], i + 1
            else:
                out.unknown = out.unknown or f"-{ch} needs a value"
                value = None
            out.options.append((f"-{ch}", value))
            return i
        if ch in spec.attached:
            out.options.append((f"-{ch}", Word.literal(rest) if rest else None))
            return i
        out.options.append((f"-{ch}", None))
    return i
