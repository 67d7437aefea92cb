"""What the shell parser hands to the policy: words, redirections, simple commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class Word:
    """One shell word, as written and as bash would pass it."""

    text: str
    """Quotes removed, expansions kept as written (``$HOME/x``): what rules match."""
    value: str | None
    """The argument bash passes, tilde expanded; None when it depends on run-time values
    (a variable, a substitution, brace expansion)."""
    glob: bool = False
    """``value`` holds an unquoted pattern (``*``, ``?``, ``[...]``) bash expands to file
    names first."""
    pipe: bool = False
    """A process substitution: bash passes ``/dev/fd/N``, a pipe from another command."""

    @property
    def static(self) -> bool:
        return self.value is not None and not self.glob

    @classmethod
    def literal(cls, text: str) -> Word:
        return cls(text, text)


@dataclass(frozen=True)
class Redirect:
    op: str
    """Operator with its file descriptor, e.g. ``>``, ``2>``, ``>>``, ``&>``, ``<<``, ``>&``."""
    target: Word | None
    """File name, descriptor number (``>&2``) or heredoc delimiter; None for ``>&-``."""

    @property
    def writes(self) -> bool:
        """Does it open a file for writing (not a descriptor copy or close)?"""
        if ">" not in self.op or self.target is None:
            return False
        return not (self.op.endswith(">&") and self.target.text.isdigit())

    @property
    def reads(self) -> bool:
        """Does it open a file for reading (``<``, not a heredoc or a descriptor copy)?"""
        return self.op.lstrip("0123456789") == "<" and self.target is not None


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[Word, ...]
    """The program and its arguments (empty for a bare assignment)."""
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    text: str = ""
    """The command's own source text."""
    repeats: bool = False
    """Inside a loop or a function body: it may run several times, in any order."""

    @cached_property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)

    @classmethod
    def of(cls, *argv: str) -> SimpleCommand:
        """A command of plain literal words (tests, rule suggestions)."""
        return cls(tuple(Word.literal(a) for a in argv), text=" ".join(argv))


@dataclass(frozen=True)
class Script:
    """A parsed command line."""

    commands: tuple[SimpleCommand, ...]
    """Every simple command, a substitution before the command that uses it."""
    hazard: str | None = None
    """Why the line can run code that none of ``commands`` shows (bash evaluates array
    subscripts in arithmetic, in ``[[ -eq ]]``, in ``test -v``…, and a value planted in a
    variable by the same line can carry a ``$(…)``); None when it cannot."""
    functions: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Names of functions the line defines (a call to one runs its body, listed above)."""


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


def refused(
    why: str,
    *,
    reads: tuple[Word, ...] = (),
    writes: tuple[Word, ...] = (),
    removes: tuple[Word, ...] = (),
    copies: tuple[tuple[Word, Word], ...] = (),
    file_command: bool = False,
) -> Effects:
    return Effects(False, why, reads, writes, removes, copies, file_command)


def named(word: Word) -> bool:
    """A path fixed by the line itself (a literal, or a pattern over the workspace)."""
    return word.value is not None and not word.pipe
