"""Confirming an edit the client says it applied.

``applied: true`` is a claim, not proof: Neovim answers it for an edit it skipped (its buffer
had moved on), and some clients send the matching ``didChange`` only after one of their own
requests returns. So after ``applied: true`` the bridge waits for the ``didChange`` that
carries a newer version, for as long as this client has been seen to need, then compares the
text with what the edit should have produced:

- the new text, or the new text plus someone's typing: the edit is there (``applied``);
- the old text plus someone's typing: the client skipped it (``skipped``);
- no ``didChange`` at all, or text that fits neither: the outcome is unknown.

An unknown outcome is remembered per file (``Unsettled``): the client has moved past the
version we edited, so no later edit may be sent against it, and until the client speaks
again the file reads as the text the edit should have produced, sent unversioned.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tether.lsp.textedits import split_lines

CONFIRM_FLOOR_S = 5.0
"""The least time a client gets to report an applied edit. VS Code reports at once, Neovim
within its 150 ms change debounce; a client that holds its notifications while one of its
own requests is pending needs longer, and teaches us so (``ChangeLatency``)."""
CONFIRM_CAP_S = 30.0
"""The most a turn waits for one confirmation, however slow the client has been."""
REFUSED_WAIT_S = 1.0
"""After ``applied: false``, how long to wait for the client to report the version it has
before anyone re-matches (a refused edit is often a race with the user's typing)."""

Verdict = Literal["applied", "skipped", "unknown"]


class ChangeLatency:
    """How long this client takes to send the ``didChange`` for an edit it applied,
    learned per connection (late arrivals count too), so the wait fits the client."""

    def __init__(self, floor: float = CONFIRM_FLOOR_S, cap: float = CONFIRM_CAP_S) -> None:
        self.floor = floor
        self.cap = cap
        self.slowest = 0.0
        """The longest delay seen so far, in seconds."""

    def observe(self, seconds: float) -> None:
        self.slowest = max(self.slowest, seconds)

    @property
    def bound(self) -> float:
        """How long to wait for the next confirmation."""
        return min(self.cap, max(self.floor, 1.5 * self.slowest))


@dataclass(frozen=True)
class Unsettled:
    """An edit the client accepted but never showed: it has moved past ``version``, and its
    text is probably ``text``."""

    version: int
    text: str
    settle_by: float
    """Monotonic time until which a read still waits for the client to report."""


def changed_size(a: str, b: str) -> int:
    """Characters removed plus characters inserted to turn ``a`` into ``b`` (line-wise
    diff, trimmed to the changed characters inside each block)."""
    if a == b:
        return 0
    old, new = split_lines(a), split_lines(b)
    size = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        x, y = "".join(old[i1:i2]), "".join(new[j1:j2])
        prefix = 0
        limit = min(len(x), len(y))
        while prefix < limit and x[prefix] == y[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and x[-1 - suffix] == y[-1 - suffix]:
            suffix += 1
        size += (len(x) - prefix - suffix) + (len(y) - prefix - suffix)
    return size


def judge(old_text: str, new_text: str, now: str) -> Verdict:
    """Is the edit ``old_text -> new_text`` in ``now``, the text the client reported after
    it? Whoever else changed the buffer did less than the edit itself, so ``now`` is
    closer to the side that holds the edit's outcome."""
    if now == new_text:
        return "applied"
    if now == old_text:
        return "skipped"
    from_new = changed_size(new_text, now)
    from_old = changed_size(old_text, now)
    if from_new < from_old:
        return "applied"
    if from_old < from_new:
        return "skipped"
    return "unknown"


class VersionWatch:
    """The versions the client reports with ``didOpen``/``didChange``, and waits on them."""

    def __init__(self) -> None:
        self.latency = ChangeLatency()
        self._waiters: dict[str, list[tuple[int, asyncio.Future[bool]]]] = {}

    def changed(self, key: str, version: int | None) -> None:
        waiters = self._waiters.get(key)
        if not waiters:
            return
        keep: list[tuple[int, asyncio.Future[bool]]] = []
        for wanted, fut in waiters:
            if fut.done():
                continue
            if version is not None and version >= wanted:
                fut.set_result(True)
            else:
                keep.append((wanted, fut))
        if keep:
            self._waiters[key] = keep
        else:
            del self._waiters[key]

    def reached(self, key: str, min_version: int) -> asyncio.Future[bool]:
        """A future that resolves when the client reports ``min_version`` or later."""
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(key, []).append((min_version, fut))
        return fut

    async def wait(self, key: str, min_version: int, timeout: float) -> bool:
        fut = self.reached(key, min_version)
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False

    async def confirm(
        self, key: str, min_version: int, sent_at: float, shows_edit: Callable[[], bool]
    ) -> bool:
        """Wait for the version an applied edit produced, for as long as this client needs.
        A report that comes later still teaches the next wait, if it shows the edit
        (``shows_edit``): a later keystroke of the user's says nothing about the client."""
        fut = self.reached(key, min_version)
        try:
            await asyncio.wait_for(asyncio.shield(fut), self.latency.bound)
        except TimeoutError:

            def late(_: asyncio.Future[bool]) -> None:
                if shows_edit():
                    self.latency.observe(time.monotonic() - sent_at)

            fut.add_done_callback(late)
            return False
        self.latency.observe(time.monotonic() - sent_at)
        return True
