"""The prompts an SDK program sent and Tether has not run yet, in order.

A prompt is a ``user`` line whose blocks Tether can give the model, or one it cannot
(``RefusedPrompt``: its turn is an error ``result`` naming the block, never silence). A line
with ``shouldQuery: false`` starts no turn (``HeldPrompt``: an empty ``result``): its blocks
wait and join the next prompt that does, as in Claude Code. ``None`` ends the prompts (stdin closed,
``end_session``).
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass

from tether.cli.stream_input import InputError, UserLine
from tether.protocol.content import ContentBlock


@dataclass(frozen=True)
class Prompt:
    """A prompt to run: its blocks, and the program's id for it."""

    blocks: list[ContentBlock]
    uuid: str | None = None


@dataclass(frozen=True)
class RefusedPrompt:
    """A prompt Tether cannot give the model, and why."""

    error: str
    uuid: str | None = None


@dataclass(frozen=True)
class HeldPrompt:
    """A ``shouldQuery: false`` line: no turn, an empty ``result`` (as Claude Code)."""

    uuid: str | None = None


Entry = Prompt | RefusedPrompt | HeldPrompt


class Prompts:
    """The prompts read and not yet run, in order; ``None`` ends them."""

    def __init__(self) -> None:
        self._entries: collections.deque[Entry | None] = collections.deque()
        self._ready = asyncio.Event()
        self._held: list[ContentBlock] = []
        """Blocks of ``shouldQuery: false`` lines, for the next prompt that queries."""

    def put_line(self, line: UserLine) -> None:
        try:
            blocks = line.blocks()
        except InputError as e:
            self.put(RefusedPrompt(f"the prompt cannot be sent: {e}", line.uuid))
            return
        if not line.should_query:
            self._held += blocks
            self.put(HeldPrompt(line.uuid))
            return
        held, self._held = self._held, []
        self.put(Prompt([*held, *blocks], line.uuid))

    def put(self, entry: Entry | None) -> None:
        self._entries.append(entry)
        self._ready.set()

    def put_back(self, entries: list[Entry]) -> None:
        """Prompts taken out that must run after all, first and in their order."""
        self._entries.extendleft(reversed(entries))
        self._ready.set()

    async def get(self) -> Entry | None:
        await self.wait()
        return self._entries.popleft()

    async def wait(self) -> None:
        """Until there is something to take."""
        while not self._entries:
            self._ready.clear()
            await self._ready.wait()

    def take_prompt(self) -> Prompt | None:
        """The next entry when it is a prompt to run (one a running turn may take in)."""
        if self._entries and isinstance(self._entries[0], Prompt):
            entry = self._entries.popleft()
            assert isinstance(entry, Prompt)
            return entry
        return None

    def queued_uuids(self) -> list[str]:
        return [e.uuid for e in self._entries if e is not None and e.uuid]

    def cancel(self, uuids: list[str]) -> list[str]:
        dropped = [e for e in self._entries if e is not None and e.uuid in uuids]
        for entry in dropped:
            self._entries.remove(entry)
        return [e.uuid for e in dropped if e.uuid]

    def end(self) -> None:
        if None not in self._entries:
            self.put(None)
