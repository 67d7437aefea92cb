"""A conversation's history as one run of JSON bytes, extended as it grows.

Both request-body encoders (``anthropic_body``, ``openai_body``) encode each message once and
build the history part of a body by joining those bytes. The join of the previous request's
messages is kept per conversation and extended by the new messages only.

The cache trusts what the engine guarantees: a message in the history is never changed in
place (compaction and rewind put new ``Message`` objects in its place). The prefix joined
before is checked by identity, so a history that was replaced is noticed and joined again
from the per-message bytes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from tether.core.messages import Message

MAX_CONVERSATIONS = 8
"""Conversations whose joined history is kept (the main one, subagents, summaries)."""


class EncodedMessage(Protocol):
    @property
    def message(self) -> Message: ...

    @property
    def wire(self) -> bytes:
        """The message's encoding; empty when nothing of it is sent."""
        ...


E = TypeVar("E", bound=EncodedMessage)


@dataclass
class _Joined:
    """The encodings of one conversation's ``sources`` joined."""

    sources: list[Message] = field(default_factory=lambda: list[Message]())
    data: bytes = b""


class JoinedHistory(Generic[E]):
    def __init__(self, encode: Callable[[Message], E]) -> None:
        self._encode = encode
        self._messages: dict[int, E] = {}
        self._joined: dict[int, _Joined] = {}
        """By the identity of a conversation's first message: the main conversation, its
        subagents and summary requests share a provider without evicting each other."""

    def encoded(self, message: Message) -> E:
        hit = self._messages.get(id(message))
        if hit is not None and hit.message is message:
            return hit
        encoded = self._encode(message)
        self._messages[id(message)] = encoded
        return encoded

    def join(self, messages: Sequence[Message], end: int) -> bytes:
        """``messages[:end]`` joined, extending what was joined for the conversation's
        previous request when this one starts with the same messages (the history grew)."""
        key = id(messages[0])
        joined = self._joined.get(key)
        done = len(joined.sources) if joined is not None else 0
        if joined is None or not (done <= end and all(map(operator.is_, joined.sources, messages))):
            self._prune(messages)
            joined = _Joined()
            done = 0
            self._joined.pop(key, None)
            if len(self._joined) >= MAX_CONVERSATIONS:
                self._joined.pop(next(iter(self._joined)))
        self._joined[key] = joined
        new = [w for m in messages[done:end] if (w := self.encoded(m).wire)]
        if new:
            data = b",".join(new)
            joined.data = joined.data + b"," + data if joined.data else data
        joined.sources.extend(messages[done:end])
        return joined.data

    def _prune(self, messages: Sequence[Message]) -> None:
        """Forget encodings of messages no conversation holds any more (after a compaction
        or a rewind)."""
        held = len(messages) + sum(len(j.sources) for j in self._joined.values())
        if len(self._messages) > 2 * held + 64:
            live = {id(m) for m in messages}
            live.update(id(m) for j in self._joined.values() for m in j.sources)
            self._messages = {k: v for k, v in self._messages.items() if k in live}
