""" "File changed outside the agent" notices. One watchdog observer per process watches the
directories of the files the agents have read (not the whole tree); at the next turn
boundary a file whose content no longer matches what the agent last saw gets a notice. The
agent's own edits update that record, so they never trigger one."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tether.core.files import read_regular_text
from tether.core.messages import Message, TextBlock
from tether.tools.context import FileState, text_hash

log = logging.getLogger(__name__)


class DirectoryEvents:
    """One watchdog observer for the whole process: one watch per directory, whatever the
    number of sessions following files in it, each event handed to the watchers following
    a file of that directory. (An observer per session, each with a thread and an inotify
    instance per directory, made every write in a shared directory wake and parse in every
    session's threads: per round-trip work that grew with the number of sessions.)"""

    def __init__(self) -> None:
        self._observer: Any = None
        self._handler: Any = None
        self._lock = threading.Lock()
        self._directories: dict[Path, tuple[Any, dict[ChangeWatcher, int]]] = {}
        """A directory's watch, and its followers with how many of their files it holds."""
        self._files: dict[Path, set[ChangeWatcher]] = {}
        """Who follows each file: an event goes to those only (sessions whose files share a
        folder must not each hear of every write in it: per write, work growing with the
        number of sessions)."""

    def _ensure_observer(self) -> Any:
        if self._observer is None:
            from watchdog.observers import Observer

            observer: Any = Observer()
            observer.daemon = True
            observer.start()
            self._observer = observer
            self._handler = _dispatch_to(self)
        return self._observer

    def follow(self, watcher: ChangeWatcher, path: Path) -> bool:
        """Hand ``watcher`` the events of ``path``'s directory; False when it cannot be
        watched (a vanished directory, inotify limits)."""
        directory = path.parent
        with self._lock:
            entry = self._directories.get(directory)
            if entry is None:
                try:
                    observer = self._ensure_observer()
                    watch = observer.schedule(self._handler, str(directory), recursive=False)
                except (OSError, RuntimeError) as e:
                    log.info("not watching %s: %s", directory, e)
                    return False
                entry = self._directories[directory] = (watch, {})
            followers = entry[1]
            followers[watcher] = followers.get(watcher, 0) + 1
            self._files.setdefault(path, set()).add(watcher)
        return True

    def unfollow(self, watcher: ChangeWatcher, paths: Iterable[Path]) -> None:
        with self._lock:
            for path in paths:
                file_followers = self._files.get(path)
                if file_followers is not None:
                    file_followers.discard(watcher)
                    if not file_followers:
                        del self._files[path]
                entry = self._directories.get(path.parent)
                if entry is None or watcher not in entry[1]:
                    continue
                watch, followers = entry
                followers[watcher] -= 1
                if followers[watcher] == 0:
                    del followers[watcher]
                if followers:
                    continue
                del self._directories[path.parent]
                try:
                    self._observer.unschedule(watch)
                except (KeyError, OSError, RuntimeError) as e:  # its directory went away
                    log.debug("unwatching %s: %s", path.parent, e)

    def saw(self, raw: str) -> None:
        path = Path(raw)
        with self._lock:
            followers = list(self._files.get(path, ()))
        for watcher in followers:
            watcher.saw(path)


def _dispatch_to(events: DirectoryEvents) -> Any:
    """The observer's handler (watchdog is imported when something is first watched)."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class Dispatch(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            for raw in (event.src_path, getattr(event, "dest_path", "")):
                if raw:
                    events.saw(os.fsdecode(raw))

    return Dispatch()


_shared: DirectoryEvents | None = None
_shared_lock = threading.Lock()


def shared_events() -> DirectoryEvents:
    """The process's one ``DirectoryEvents`` (made on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = DirectoryEvents()
        return _shared


class ChangeWatcher:
    def __init__(self, events: DirectoryEvents | None = None) -> None:
        self._events = events
        self._followed: set[Path] = set()
        self._dirty: set[Path] = set()
        self._lock = threading.Lock()
        self._notified: dict[Path, str] = {}
        self._following = threading.Lock()
        self._closed = False

    def unfollowed(self, paths: Iterable[Path]) -> set[Path]:
        """Which of these files are not watched yet (cheap: a set difference)."""
        return set(paths) - self._followed

    def follow(self, paths: Iterable[Path]) -> None:
        """Watch these files (idempotent). The first file of a directory sets up a watch
        (the process's first starts the observer's threads): callers on an event loop call
        it in a thread, and only when ``unfollowed`` names files."""
        with self._following:
            new = self.unfollowed(paths)
            if not new or self._closed:
                return
            if self._events is None:
                self._events = shared_events()
            for path in new:
                if self._events.follow(self, path):
                    self._followed.add(path)

    def saw(self, path: Path) -> None:
        """An event of a followed file (from the observer's thread)."""
        with self._lock:
            self._dirty.add(path)

    def dirty(self, files: FileState) -> bool:
        """Whether a file the agent read saw an event since the last
        ``changed_since_read`` (events of the others are dropped here)."""
        with self._lock:
            self._dirty = {p for p in self._dirty if files.get(p) is not None}
            return bool(self._dirty)

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
        with self._following:  # a ``follow`` going on in a thread ends first
            self._closed = True
            if self._events is not None:
                self._events.unfollow(self, self._followed)
            self._followed.clear()


def change_notice(paths: list[Path]) -> Message:
    lines = "\n".join(f"- {p}" for p in paths)
    text = (
        "<system-reminder>\nThese files changed outside the agent since you last read them "
        "(the user or another program edited them). Read them again before relying on "
        f"their content or editing them:\n{lines}\n</system-reminder>"
    )
    return Message(role="user", content=[TextBlock(text=text)])
