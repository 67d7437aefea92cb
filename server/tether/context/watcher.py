""" "File changed outside the agent" notices. A watchdog observer watches the directories of
the files the agent has read (not the whole tree); at the next turn boundary a file whose
content no longer matches what the agent last saw gets a notice. The agent's own edits
update that record, so they never trigger one."""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path
from typing import Any

from tether.core.files import read_regular_text
from tether.core.messages import Message, TextBlock
from tether.tools.context import FileState, text_hash

log = logging.getLogger(__name__)


class ChangeWatcher:
    def __init__(self) -> None:
        self._observer: Any = None
        self._watched: set[Path] = set()
        self._dirty: set[Path] = set()
        self._lock = threading.Lock()
        self._notified: dict[Path, str] = {}

    def _ensure_observer(self) -> Any:
        if self._observer is None:
            from watchdog.observers import Observer

            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        return self._observer

    def follow(self, paths: list[Path]) -> None:
        """Watch the directories of these files (idempotent, cheap to call each turn)."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                for raw in (event.src_path, getattr(event, "dest_path", "")):
                    if raw:
                        with watcher._lock:
                            watcher._dirty.add(Path(str(raw)))

        for directory in {p.parent for p in paths} - self._watched:
            try:
                self._ensure_observer().schedule(Handler(), str(directory), recursive=False)
                self._watched.add(directory)
            except (OSError, RuntimeError) as e:  # a vanished directory, inotify limits
                log.info("not watching %s: %s", directory, e)

    def changed_since_read(self, files: FileState) -> list[Path]:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        changed: list[Path] = []
        for path in sorted(dirty):
            record = files.get(path)
            if record is None:
                continue
            try:
                current = text_hash(read_regular_text(path, "utf-8-sig"))
            except (OSError, UnicodeDecodeError):
                current = hashlib.blake2b(b"missing", digest_size=16).hexdigest()
            if current != record.hash and self._notified.get(path) != current:
                self._notified[path] = current
                changed.append(path)
        return changed

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None


def change_notice(paths: list[Path]) -> Message:
    lines = "\n".join(f"- {p}" for p in paths)
    text = (
        "<system-reminder>\nThese files changed outside the agent since you last read them "
        "(the user or another program edited them). Read them again before relying on "
        f"their content or editing them:\n{lines}\n</system-reminder>"
    )
    return Message(role="user", content=[TextBlock(text=text)])
