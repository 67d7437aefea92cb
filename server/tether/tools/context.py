"""What a tool call can see and touch: the run state shared by the tools of one session."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether.editor.port import Document, Editor
from tether.protocol.updates import Mode, PlanEntry, SessionUpdate

if TYPE_CHECKING:
    from tether.tasks.registry import TaskRegistry


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class ReadRecord:
    """What the agent saw when it last read (or wrote) a file."""

    hash: str
    version: int | None
    partial: bool
    text: str


class FileState:
    """The files the agent has read, with a content hash, so edits can detect changes."""

    def __init__(self) -> None:
        self._records: dict[Path, ReadRecord] = {}

    def record(self, doc: Document, *, partial: bool = False) -> None:
        self._records[doc.path] = ReadRecord(text_hash(doc.text), doc.version, partial, doc.text)

    def get(self, path: Path) -> ReadRecord | None:
        return self._records.get(path)

    def forget(self, path: Path) -> None:
        self._records.pop(path, None)

    def paths(self) -> list[Path]:
        return list(self._records)

    def clear(self) -> None:
        self._records.clear()


@dataclass
class ToolConfig:
    """Knobs of the built-in tools (from settings)."""

    bash_default_timeout_ms: int = 120_000
    bash_max_timeout_ms: int = 600_000
    bash_max_output_chars: int = 30_000
    read_max_bytes: int = 256 * 1024
    read_max_lines: int = 2000
    read_max_line_chars: int = 2000
    glob_max_results: int = 100
    grep_max_chars: int = 20_000
    ripgrep: str | None = "rg"
    """Path or name of ripgrep; None forces the pure-Python Grep."""
    sandbox: bool = True
    """Run Bash under bubblewrap when it works."""


@dataclass
class SessionRunState:
    """Mutable state of one session that tools read and change (restored on resume)."""

    mode: Mode = "default"
    todos: list[PlanEntry] = field(default_factory=lambda: list[PlanEntry]())
    files: FileState = field(default_factory=FileState)


@dataclass
class ToolContext:
    """Passed to every tool call."""

    session_id: str
    tool_use_id: str
    cwd: Path
    """The workspace root; relative paths resolve against it."""
    editor: Editor
    state: SessionRunState
    config: ToolConfig
    tasks: TaskRegistry
    emit: Callable[[SessionUpdate], None]
    """Publish an update (e.g. live Bash output) to the editor while the tool runs."""
    additional_dirs: list[Path] = field(default_factory=lambda: list[Path]())

    @property
    def files(self) -> FileState:
        return self.state.files
