"""Context windows learned from refusals, kept per endpoint and model.

A server may enforce a smaller window than the model's table or its own announcement says
(a proxy, a local server started with a small context, a plan's limit). When a refusal names
the window (``providers/overflow``), the provider takes it at once, and ``WindowBook`` keeps
it in ``windows.json`` of the user data directory so the next session with that model at
that endpoint starts with it. A request larger than the learned window that the server then
accepts shows the window has grown since: the entry is dropped.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, cast

log = logging.getLogger(__name__)
FILE_NAME = "windows.json"


class WindowBook:
    """The learned windows on disk (``path``; None keeps them in memory only). Each change is
    read-modify-written whole and replaced atomically: several sessions (and the warm daemon's
    workspaces) may share the file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def in_dir(cls, data_dir: Path) -> WindowBook:
        return cls(data_dir / FILE_NAME)

    @staticmethod
    def key(endpoint: str, model: str) -> str:
        return f"{endpoint.rstrip('/')} {model}"

    def get(self, endpoint: str, model: str) -> int | None:
        key = self.key(endpoint, model)
        with self._lock:
            stored = self._read().get(key) if self.path is not None else None
            return stored if stored is not None else self._memory.get(key)

    def learn(self, endpoint: str, model: str, window: int) -> None:
        self._change(self.key(endpoint, model), window)

    def forget(self, endpoint: str, model: str) -> None:
        self._change(self.key(endpoint, model), None)

    def _change(self, key: str, window: int | None) -> None:
        with self._lock:
            if window is None:
                self._memory.pop(key, None)
            else:
                self._memory[key] = window
            if self.path is None:
                return
            entries = self._read()
            if window is None:
                if entries.pop(key, None) is None:
                    return
            else:
                entries[key] = window
            try:
                self._write(entries)
            except OSError as e:  # the session keeps it; only the next one will not know
                log.warning("could not save the learned context window to %s: %s", self.path, e)

    def _read(self) -> dict[str, int]:
        assert self.path is not None
        try:
            raw: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("ignoring unreadable %s: %s", self.path, e)
            return {}
        if not isinstance(raw, dict):
            return {}
        windows: object = cast("dict[str, Any]", raw).get("windows")
        if not isinstance(windows, dict):
            return {}
        entries = cast("dict[str, Any]", windows)
        return {k: v for k, v in entries.items() if isinstance(v, int) and not isinstance(v, bool)}

    def _write(self, entries: dict[str, int]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"windows": dict(sorted(entries.items()))}, indent=1) + "\n"
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".windows-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class LearnedWindow:
    """One provider's learned window for its endpoint and model."""

    def __init__(self, book: WindowBook | None, endpoint: str, model: str) -> None:
        self._book = book or WindowBook(None)
        self.endpoint = endpoint
        self.model = model
        self.value = self._book.get(endpoint, model)
        """The window a server named (None: none learned)."""

    def cap(self, window: int) -> int:
        """``window`` (the table's, the setting's or the server's report), or less where
        the server said less."""
        return min(window, self.value) if self.value else window

    def refused(self, limit: int | None) -> None:
        """A refusal named ``limit``: it is the window from now on (and for next sessions)."""
        if limit is None or limit <= 0 or limit == self.value:
            return
        self.value = limit
        self._book.learn(self.endpoint, self.model, limit)

    def accepted(self, context_tokens: int) -> None:
        """The server took a request of ``context_tokens``: a learned window smaller than
        that is out of date."""
        if self.value is not None and context_tokens > self.value:
            self.value = None
            self._book.forget(self.endpoint, self.model)
