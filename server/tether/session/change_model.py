"""The values of a session's change set (``changes``): hunks, the files they are in, where
they are now, and what a request chose and got."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tether.session.hunks import Block, LineDiff, changed_blocks, diff_lines, summary
from tether.transcript.payloads import HunkState

BIG_TEXT = 64 * 1024
"""Texts longer than this together are diffed in a thread."""


@dataclass
class Hunk:
    """One changed block of a turn, and what the user made of it."""

    hunk_id: str
    turn_id: str
    path: Path
    block: Block
    state: HunkState = "pending"
    last_turn: str | None = None
    """The session's last turn when ``state`` was set (see ``HunkStateData``)."""

    @property
    def new_range(self) -> tuple[int, int]:
        return self.block.new_start, self.block.new_start + len(self.block.new)

    @property
    def old_range(self) -> tuple[int, int]:
        return self.block.old_start, self.block.old_start + len(self.block.old)

    @property
    def summary(self) -> str:
        """What the turn did here, in one line."""
        return summary(self.block.old, self.block.new)


@dataclass
class FileChange:
    """One file a turn changed: its text before the turn and after it."""

    turn_id: str
    path: Path
    before: str | None
    after: str | None
    problem: str | None = None
    """Why the file has no hunks (its text before or after is not known), or None."""
    shell: bool = False
    """A shell command changed it last: an editor's buffer of it may still show the text
    before (Neovim reloads a changed file only when asked), so its text there does not
    tell that the user undid anything."""
    hunks: list[Hunk] = field(default_factory=lambda: list[Hunk]())
    blocks: list[Block] | None = None
    """The changed blocks, when they were diffed ahead of numbering (off the event loop)."""
    _diffs: dict[bool, tuple[str, LineDiff]] = field(
        default_factory=lambda: dict[bool, tuple[str, LineDiff]]()
    )

    @property
    def big(self) -> bool:
        """Big enough to be diffed in a thread (the event loop serves every editor)."""
        return len(self.before or "") + len(self.after or "") > BIG_TEXT

    def changed_blocks(self) -> list[Block]:
        if self.blocks is None:
            self.blocks = changed_blocks(self.before or "", self.after or "")
        return self.blocks

    def diff_to(self, current: str, *, from_before: bool = False) -> LineDiff:
        """How the turn's text after (or before) became ``current``; the last one is kept,
        so asking again about an unchanged file costs a comparison."""
        cached = self._diffs.get(from_before)
        if cached is not None and cached[0] == current:
            return cached[1]
        base = (self.before if from_before else self.after) or ""
        diff = diff_lines(base, current)
        self._diffs[from_before] = (current, diff)
        return diff


@dataclass
class TurnChanges:
    turn_id: str
    files: dict[Path, FileChange]
    derived: bool = False


@dataclass(frozen=True)
class Located:
    """A hunk where it is now."""

    hunk: Hunk
    lines: tuple[int, int] | None
    """Its lines in the current text, ``[start, end)``; None when it is undone or a conflict."""
    conflict: bool = False
    """A pending or kept hunk whose lines changed since: where it is cannot be told."""
    tail: str = ""
    """Set when ``lines`` reach the end of a file without a final line break: the text of
    its last line, where the hunk's range ends (a position past it does not exist)."""


@dataclass(frozen=True)
class FileListing:
    """One file's hunks where they are now, and the changes of it that have no hunks."""

    path: Path
    located: list[Located]
    untracked: list[FileChange]


@dataclass(frozen=True)
class Selection:
    """Which hunks a request is about: every criterion given must hold. Without ids, only
    pending hunks are chosen (keep all, undo all)."""

    hunk_ids: tuple[str, ...] = ()
    turn_id: str | None = None
    path: Path | None = None

    @property
    def empty(self) -> bool:
        return not self.hunk_ids and self.turn_id is None and self.path is None


@dataclass(frozen=True)
class Refusal:
    """A hunk that was not kept or undone, and why."""

    hunk: Hunk
    reason: str
    conflict: bool = False


@dataclass
class Outcome:
    done: list[Hunk] = field(default_factory=lambda: list[Hunk]())
    refused: list[Refusal] = field(default_factory=lambda: list[Refusal]())
    notes: list[str] = field(default_factory=lambda: list[str]())
    """What the user should know besides: a file on disk left as it was, say."""
