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
* a request larger than the learned window that the server then accepts: dropped too;
* a context that does not fit an earlier session's window where the server reports none:
  the window is set aside for one request above it (``LearnedWindow.retry``), so a server
  restarted with more is found out at the cost of one refusal at most.

Beside each window the file keeps when and from which refusal it was learned (``learned``),
which a stop for a context that cannot fit quotes.

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
from datetime import UTC, datetime
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
        self._notes: dict[str, str] = {}
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

    def learn(
        self, endpoint: str, model: str, window: int, credential: str | None = None, note: str = ""
    ) -> None:
        """``note``: when and from which refusal (kept beside the window, for the user)."""
        self._change(self.key(endpoint, model, credential), window, note)

    def forget(self, endpoint: str, model: str, credential: str | None = None) -> None:
        self._change(self.key(endpoint, model, credential), None)

    def note(self, endpoint: str, model: str, credential: str | None = None) -> str:
        """When and from which refusal the window was learned ("": not said)."""
        key = self.key(endpoint, model, credential)
        with self._lock:
            return self._notes.get(key) or (self._read_notes().get(key, "") if self.path else "")

    def _change(self, key: str, window: int | None, note: str = "") -> None:
        with self._lock:
            if window is None:
                self._memory.pop(key, None)
                self._notes.pop(key, None)
            else:
                self._memory[key] = window
                self._notes[key] = note
            if self.path is None:
                return
            entries, notes = self._read(), self._read_notes()
            if window is None:
                notes.pop(key, None)
                if entries.pop(key, None) is None:
                    return
            else:
                entries[key] = window
                notes[key] = note
            try:
                self._write(entries, {k: v for k, v in notes.items() if k in entries and v})
            except OSError as e:  # the session keeps it; only the next one will not know
                log.warning("could not save the learned context window to %s: %s", self.path, e)

    def _section(self, name: str) -> dict[str, Any]:
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
        section: object = cast("dict[str, Any]", raw).get(name)
        return cast("dict[str, Any]", section) if isinstance(section, dict) else {}

    def _read(self) -> dict[str, int]:
        entries = self._section("windows")
        return {k: v for k, v in entries.items() if isinstance(v, int) and not isinstance(v, bool)}

    def _read_notes(self) -> dict[str, str]:
        return {k: v for k, v in self._section("learned").items() if isinstance(v, str)}

    def _write(self, entries: dict[str, int], notes: dict[str, str]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        whole = {"windows": dict(sorted(entries.items())), "learned": dict(sorted(notes.items()))}
        text = json.dumps(whole, indent=1, ensure_ascii=False) + "\n"
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
        self._trying: int | None = None
        """An earlier session's window set aside for one request above it (``retry``)."""

    def cap(self, window: int, *, explicit: bool = False) -> int:
        """``window`` (the table's, the setting's or the server's report), or less where
        a server said less; an ``explicit`` setting is only capped by what a refusal said
        in this session."""
        if self.value is None or (explicit and self._earlier):
            return window
        return min(window, self.value)

    def learned(self, window: int) -> str:
        """What the user should know of ``window`` (the one in force) if it is the learned
        one: when, from which refusal, and how to forget it ("": it is not)."""
        if self.value is None or window != self.value:
            return ""
        note = self._book.note(self.endpoint, self.model, self.credential)
        when = f" {note}" if note else ""
        where = self._book.path or "memory"
        session = "an earlier session" if self._earlier else "this session"
        return (
            f"The window of {window} tokens was learned by {session}{when} and is kept in "
            f"{where} (delete its line, or the file, to forget it)"
        )

    def retry(self) -> bool:
        """The context does not fit an earlier session's window and the server does not
        report one: set it aside so one request goes above it (the server may have been
        restarted with more). Accepted, it is forgotten; refused, the refusal teaches the
        window anew. Once per session: True when it was set aside now."""
        if not self._earlier or self.value is None:
            return False
        self._trying, self.value, self._earlier = self.value, None, False
        return True

    def announced(self) -> None:
        """The server reported its window just now: fresher than what an earlier session
        learned, which is forgotten (a refusal in this session still stands)."""
        if self._earlier or self._trying is not None:
            self.value, self._earlier, self._trying = None, False, None
            self._book.forget(self.endpoint, self.model, self.credential)

    def refused(self, model: str, limit: int | None, said: str = "") -> None:
        """A refusal of a request to ``model`` named ``limit``: it is the window from now on
        (and for next sessions), if ``model`` is this window's (a side request to another
        model, such as the small one, says nothing about this model's window). ``said``:
        the refusal's words, kept with the window."""
        if limit is None or limit <= 0 or model != self.model:
            return
        self._earlier, self._trying = False, None
        if limit == self.value:
            return
        self.value = limit
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        note = f"on {when} from the refusal \u201c{said[:200]}\u201d" if said else f"on {when}"
        self._book.learn(self.endpoint, self.model, limit, self.credential, note)

    def accepted(self, model: str, context_tokens: int) -> None:
        """The server took a request of ``context_tokens`` to ``model``: if that is this
        window's model, a learned window smaller than that is out of date."""
        if model != self.model:
            return
        if self._trying is not None and context_tokens > self._trying:
            self._trying = None
            self._book.forget(self.endpoint, self.model, self.credential)
        if self.value is not None and context_tokens > self.value:
            self.value, self._earlier = None, False
            self._book.forget(self.endpoint, self.model, self.credential)
