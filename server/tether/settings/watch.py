"""Watch the settings files; a change marks the settings stale and the next tool call
reloads them (no restart, and nothing half-applied in the middle of a call).

watchdog reports from its own thread, so the handler only sets a flag. The directories
are watched, not the files: editors save by writing a temp file and renaming it over the
old one, and ``.tether/`` may not exist yet when the daemon starts (the workspace root is
watched, non-recursively, so its creation is seen and ``.tether/`` is watched from then on).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

log = logging.getLogger(__name__)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: SettingsWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path, getattr(event, "dest_path", "")]
        self.watcher.saw(*(os.fsdecode(p) for p in paths if p))


class SettingsWatcher:
    """Tracks ``files``; ``stale`` becomes true after any of them changes."""

    def __init__(self, files: Iterable[Path]) -> None:
        self.files = {Path(os.path.abspath(f)) for f in files}
        self._stale = threading.Event()
        self._observer: Any = None
        self._watched: set[Path] = set()
        self._lock = threading.Lock()

    @property
    def stale(self) -> bool:
        return self._stale.is_set()

    def take(self) -> bool:
        """True (once) if something changed since the last call."""
        if not self._stale.is_set():
            return False
        self._stale.clear()
        return True

    def saw(self, *paths: str) -> None:
        for raw in paths:
            path = Path(raw)
            if path in self.files or any(f.is_relative_to(path) for f in self.files):
                self._stale.set()
                self._watch_new_dirs()
                return

    def start(self) -> None:
        if self._observer is not None:
            return
        observer: Any = Observer()
        observer.daemon = True
        self._observer = observer
        self._watch_new_dirs()
        try:
            observer.start()
        except OSError as e:  # inotify limits, or an unsupported filesystem
            log.warning("settings files are not watched (%s); restart to apply changes", e)
            self._observer = None

    def _watch_new_dirs(self) -> None:
        observer = self._observer
        if observer is None:
            return
        with self._lock:
            for directory in self._directories():
                if directory in self._watched or not directory.is_dir():
                    continue
                try:
                    observer.schedule(_Handler(self), str(directory), recursive=False)
                except OSError as e:
                    log.warning("cannot watch %s: %s", directory, e)
                    continue
                self._watched.add(directory)

    def _directories(self) -> list[Path]:
        """Each file's directory, or its nearest existing ancestor (to see it appear)."""
        out: list[Path] = []
        for f in sorted(self.files):
            directory = f.parent
            while not directory.is_dir() and directory != directory.parent:
                directory = directory.parent
            out.append(directory)
        return out

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=2)
