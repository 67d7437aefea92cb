"""Where print mode's log lines go, and the notes a person at a terminal sees.

Print mode's stderr belongs to the run: a script that treats stderr output as failure must
see nothing there on success, as with ``claude -p``. So the Python log lines of a run in
this process go to the log file (the daemon's, which ``tether doctor`` names), as the
daemon's own do; ``--log-level`` given on the command line puts them on stderr as well.

What a person should know of them (a skipped rule, a failed hook, a skill that does not
load) is said as a ``[tether]`` line, once per run however often it is logged, and only
when stderr is for such notes: a terminal, or ``--verbose`` (``render.talkative``). The
daemon runs print mode for other terminals: the notes of each call go to that call's
stderr, and log lines of nobody's call to the daemon's log alone.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import threading
from collections.abc import Generator
from contextvars import ContextVar

DEFAULT_LEVEL = "WARNING"


class Notes:
    """What one run has said on stderr as ``[tether]`` lines: each text once."""

    def __init__(self, talk: bool) -> None:
        self.talk = talk
        """Notes go to stderr (a terminal, or ``--verbose``); errors go there always."""
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def first(self, text: str) -> bool:
        """True the first time ``text`` is offered (it is then counted as said)."""
        with self._lock:
            if text in self._said:
                return False
            self._said.add(text)
            return True

    def say(self, text: str, *, error: bool = False) -> None:
        """``[tether] text`` on stderr, once; a note only when stderr is for notes."""
        if (self.talk or error) and self.first(text):
            sys.stderr.write(f"[tether] {text}\n")
            sys.stderr.flush()


_NOTES: ContextVar[Notes | None] = ContextVar("tether_notes", default=None)


def current_notes() -> Notes:
    """The notes of the run in progress (outside a run: a talkative stand-in)."""
    return _NOTES.get() or Notes(talk=True)


def say(text: str, *, error: bool = False) -> None:
    """A ``[tether]`` line of the current run (``Notes.say``)."""
    current_notes().say(text, error=error)


@contextlib.contextmanager
def noting(talk: bool) -> Generator[Notes]:
    """The notes of one run: log records of its tasks and threads become its notes."""
    notes = Notes(talk)
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


class NotesHandler(logging.Handler):
    """Warnings logged during a run, said once to that run's stderr (``Notes``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        notes = _NOTES.get()
        if notes is None:
            return
        try:
            text = record.getMessage().replace("\n", " ")
        except Exception:  # a bad format string in a log call: the log file shows it
            return
        notes.say(text)


class PrivateFileHandler(logging.FileHandler):
    """Appends to a file created 0600, and only once there is something to write."""

    def __init__(self, path: str) -> None:
        super().__init__(path, mode="a", encoding="utf-8", delay=True)

    def _open(self) -> io.TextIOWrapper:
        return open(
            self.baseFilename,
            "a",
            encoding=self.encoding,
            opener=lambda path, flags: os.open(path, flags, 0o600),
        )


_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_setup_lock = threading.Lock()


def print_logging(level: str | None) -> None:
    """Logging for print mode (this process, or the daemon running it): notes for the
    run's stderr; this process's log lines to the log file when nothing else takes them
    (the daemon's go to its log already); with ``level`` given, to stderr as well."""
    root = logging.getLogger()
    with _setup_lock:
        if not any(isinstance(h, NotesHandler) for h in root.handlers):
            unclaimed = not root.handlers
            root.addHandler(NotesHandler())
            if unclaimed:
                root.setLevel(_level(level or DEFAULT_LEVEL))
                _to_log_file(root)
                if level is not None:
                    stream = logging.StreamHandler(sys.stderr)
                    stream.setFormatter(logging.Formatter(_FORMAT))
                    root.addHandler(stream)


def stderr_logging(level: str | None) -> None:
    """Logging of the other commands (an editor's server, ACP, the daemon): stderr, which
    is their log (an editor's output panel, the daemon's log file)."""
    logging.basicConfig(level=_level(level or DEFAULT_LEVEL), stream=sys.stderr, format=_FORMAT)


def _level(name: str) -> int:
    return logging.getLevelNamesMapping().get(str(name).upper(), logging.WARNING)


def _to_log_file(root: logging.Logger) -> None:
    from tether.daemon.paths import ensure_private, log_path, runtime_dir

    try:
        ensure_private(runtime_dir())
    except OSError:
        return  # no private place for it (said when the daemon is reached or started)
    handler = PrivateFileHandler(str(log_path()))
    handler.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(handler)
