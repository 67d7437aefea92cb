"""Context windows learned from refusals, kept per endpoint, model and credential.

A server may enforce a smaller window than the model's table or its own announcement says (a
proxy, a local server started with a small context, a plan's limit). When a refusal names
the window (``providers/overflow``), the provider takes it at once, and ``WindowBook`` keeps
it in ``windows.json`` of the user data directory so the next session with that model at
that endpoint, with the same credential, starts with it (a digest of the key or token is
part of the entry's name: one account's limit does not cap another's, and the file holds no
secret).

A learned window is a fact about the past, so fresher facts win over it:

* the user's explicit ``modelOptions.contextWindow``, over a window an earlier session
  learned (a refusal in this session still bounds it: the server has just said so);
* the server's own announcement (``discovery``), over a window an earlier session learned:
  the stored entry is dropped;
* a request larger than the learned window that the server then accepts: dropped too.

To forget a window by hand, delete its line from ``windows.json`` (``tether doctor`` lists
the learned windows of the model it checks, with the file's path), or the file.
"""

from __future__ import annotations

import hashlib
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
    def key(endpoint: str, model: str, credential: str | None = None) -> str:
        """``endpoint model`` and a digest of ``credential`` (none: ``-``)."""
        return f"{endpoint.rstrip('/')} {model} {credential_id(credential)}"

    def get(self, endpoint: str, model: str, credential: str | None = None) -> int | None:
        key = self.key(endpoint, model, credential)
        with self._lock:
            stored = self._read().get(key) if self.path is not None else None
            return stored if stored is not None else self._memory.get(key)

    def entries(self, endpoint: str, model: str) -> dict[str, int]:
        """The learned windows of ``model`` at ``endpoint``, for any credential (by key)."""
        prefix = f"{endpoint.rstrip('/')} {model} "
        with self._lock:
            found = {**self._memory, **(self._read() if self.path is not None else {})}
        return {k: v for k, v in found.items() if k.startswith(prefix)}

    def learn(self, endpoint: str, model: str, window: int, credential: str | None = None) -> None:
        self._change(self.key(endpoint, model, credential), window)

    def forget(self, endpoint: str, model: str, credential: str | None = None) -> None:
        self._change(self.key(endpoint, model, credential), None)

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


def credential_id(credential: str | None) -> str:
    """A short digest naming a credential without revealing it (``-`` for none)."""
    if not credential:
        return "-"
    return hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()[:12]


class LearnedWindow:
    """One provider's learned window for its endpoint, model and credential."""

    def __init__(
        self, book: WindowBook | None, endpoint: str, model: str, credential: str | None = None
    ) -> None:
        self._book = book or WindowBook(None)
        self.endpoint = endpoint
        self.model = model
        self.credential = credential
        self.value = self._book.get(endpoint, model, credential)
        """The window a server named (None: none learned)."""
        self._earlier = self.value is not None
        """``value`` was learned by an earlier session (not by a refusal in this one)."""

    def cap(self, window: int, *, explicit: bool = False) -> int:
        """``window`` (the table's, the setting's or the server's report), or less where
        a server said less; an ``explicit`` setting is only capped by what a refusal said
        in this session."""
        if self.value is None or (explicit and self._earlier):
            return window
        return min(window, self.value)

    def announced(self) -> None:
        """The server reported its window just now: fresher than what an earlier session
        learned, which is forgotten (a refusal in this session still stands)."""
        if self._earlier:
            self.value, self._earlier = None, False
            self._book.forget(self.endpoint, self.model, self.credential)

    def refused(self, model: str, limit: int | None) -> None:
        """A refusal of a request to ``model`` named ``limit``: it is the window from now on
        (and for next sessions), if ``model`` is this window's (a side request to another
        model, such as the small one, says nothing about this model's window)."""
        if limit is None or limit <= 0 or model != self.model:
            return
        self._earlier = False
        if limit == self.value:
            return
        self.value = limit
        self._book.learn(self.endpoint, self.model, limit, self.credential)

    def accepted(self, model: str, context_tokens: int) -> None:
        """The server took a request of ``context_tokens`` to ``model``: if that is this
        window's model, a learned window smaller than that is out of date."""
        if model != self.model:
            return
        if self.value is not None and context_tokens > self.value:
            self.value, self._earlier = None, False
            self._book.forget(self.endpoint, self.model, self.credential)
