"""Diagnostics in: what the editor's other language servers report, kept per file, so new
errors in files the agent edited reach the next model request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tether.core.messages import Message, TextBlock
from tether.lsp.params import Diagnostic
from tether.lsp.server import uri_key

WAIT_S = 1.0


def _key(d: Diagnostic) -> tuple[int, str]:
    return d.range.start.line, d.message


def _is_error(d: Diagnostic) -> bool:
    return d.severity in (None, 1)


class DiagnosticsStore:
    def __init__(self) -> None:
        self.by_uri: dict[str, list[Diagnostic]] = {}
        self.updated: dict[str, float] = {}
        self.producing: set[str] = set()
        self.first_errors: dict[str, set[tuple[int, str]]] = {}
        """The errors of each file's first report: the baseline before any agent edit."""
        """Files something has reported diagnostics for: only these are worth waiting for."""
        self._changed = asyncio.Event()

    def publish(self, uri: str, diagnostics: list[Diagnostic]) -> None:
        key = uri_key_from(uri)
        if diagnostics or key in self.by_uri:
            self.producing.add(key)
        if key not in self.first_errors:
            self.first_errors[key] = {_key(d) for d in diagnostics if _is_error(d)}
        self.by_uri[key] = diagnostics
        self.updated[key] = time.monotonic()
        self._changed.set()
        self._changed = asyncio.Event()

    def errors(self, path: Path) -> list[Diagnostic]:
        return [d for d in self.by_uri.get(uri_key(path), []) if _is_error(d)]

    async def wait_after(self, path: Path, since: float, timeout: float) -> None:
        if uri_key(path) not in self.producing:
            return  # nothing reports on this file (text, config): do not wait for nothing
        deadline = time.monotonic() + timeout
        while self.updated.get(uri_key(path), 0.0) < since:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return


def uri_key_from(uri: str) -> str:
    return unquote(uri)


def diagnostics_source(
    store: DiagnosticsStore, edited: dict[Path, float], enabled: Callable[[], bool]
) -> Callable[[], Any]:
    """An engine attachment source: after edits, new errors in the edited files."""
    baseline: dict[Path, set[tuple[int, str]]] = {}

    async def source() -> list[Message]:
        if not enabled() or not edited:
            edited.clear()
            return []
        changes = dict(edited)
        edited.clear()
        paths = sorted(changes)
        await asyncio.gather(*(store.wait_after(p, changes[p], WAIT_S) for p in paths))
        lines: list[str] = []
        for path in paths:
            errors = store.errors(path)
            # The first report for a file is taken as its state before the agent's edits.
            seen = baseline.get(path, store.first_errors.get(uri_key(path), set()))
            new = [d for d in errors if _key(d) not in seen]
            baseline[path] = {_key(d) for d in errors}
            for d in new[:20]:
                line = _key(d)[0] + 1
                lines.append(f"{path}:{line}: {d.message} [{d.source or ''}]")
        if not lines:
            return []
        text = "<new-diagnostics>\nThe editor reports new errors after your edits:\n"
        text += "\n".join(lines) + "\n</new-diagnostics>"
        return [Message(role="user", content=[TextBlock(text=text)])]

    return source
