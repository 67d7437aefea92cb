"""Chat completions request bodies built by joining cached encodings.

As for the Messages API (``anthropic_body``): each message of the history is converted
(``convert_openai``) and encoded once, and the body is the join of those bytes, so a
request costs the encoding of the messages new since the previous one, not of the whole
history; the SDK's parameter transform, which walks the whole tree, is skipped (the body
is posted as raw content).

The cache relies on what the engine guarantees: a message in the history is never changed
in place. The prefix joined for the previous request is checked by identity; a history that
was replaced (compaction, rewind) is joined again from the per-message bytes.

The JSON is the document ``request_messages``/``tool_params`` describe (the tests compare
both).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field

from tether.core.messages import Message
from tether.providers.anthropic_body import MAX_CONVERSATIONS, encode
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec
from tether.providers.convert_openai import message_params, tool_params


class _Encoded:
    """One message as chat completions messages (a user message may become several: its
    tool results, then its text), encoded and joined; empty when nothing is sendable."""

    __slots__ = ("message", "wire")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.wire = b",".join(encode(p) for p in message_params(message))


@dataclass
class _Joined:
    sources: list[Message] = field(default_factory=lambda: list[Message]())
    data: bytes = b""


class ChatBodyEncoder:
    """Builds request bodies (a provider keeps one for every conversation it serves)."""

    def __init__(self) -> None:
        self._messages: dict[int, _Encoded] = {}
        self._joined: dict[int, _Joined] = {}
        """By the identity of a conversation's first message (main, subagents, summaries)."""
        self._tools_key: tuple[object, ...] | None = None
        self._tools = b""
        self._tool_schemas: list[object] = []
        """The schemas keyed by identity in ``_tools_key``, kept alive so ids stay unique."""
        self._system_key: tuple[SystemBlock, ...] | None = None
        self._system = b""

    def body(self, request: ModelRequest, *, max_tokens: int | None, stream: bool) -> bytes:
        """The JSON body of ``chat.completions.create`` for ``request`` (its model set)."""
        messages = [m for m in (self._system_bytes(request.system), self._history(request)) if m]
        parts = [b'{"model":%s,"messages":[%s]' % (encode(request.model), b",".join(messages))]
        tools = self._tools_bytes(request.tools)
        if tools:
            parts.append(b',"tools":' + tools)
        if max_tokens is not None:
            parts.append(b',"max_tokens":%d' % max_tokens)
        if stream:
            parts.append(b',"stream":true,"stream_options":{"include_usage":true}')
        else:
            parts.append(b',"stream":false')
        parts.append(b"}")
        return b"".join(parts)

    # -- messages ---------------------------------------------------------------------

    def _encoded(self, message: Message) -> _Encoded:
        hit = self._messages.get(id(message))
        if hit is not None and hit.message is message:
            return hit
        encoded = _Encoded(message)
        self._messages[id(message)] = encoded
        return encoded

    def _history(self, request: ModelRequest) -> bytes:
        messages = request.messages
        if not messages:
            return b""
        key = id(messages[0])
        joined = self._joined.get(key)
        done = len(joined.sources) if joined is not None else 0
        end = len(messages)
        if joined is None or not (done <= end and all(map(operator.is_, joined.sources, messages))):
            self._prune(messages)
            joined = _Joined()
            done = 0
            self._joined.pop(key, None)
            if len(self._joined) >= MAX_CONVERSATIONS:
                self._joined.pop(next(iter(self._joined)))
        self._joined[key] = joined
        new = [w for m in messages[done:end] if (w := self._encoded(m).wire)]
        if new:
            data = b",".join(new)
            joined.data = joined.data + b"," + data if joined.data else data
        joined.sources.extend(messages[done:end])
        return joined.data

    def _prune(self, messages: Sequence[Message]) -> None:
        """Forget encodings of messages no conversation holds any more."""
        held = len(messages) + sum(len(j.sources) for j in self._joined.values())
        if len(self._messages) > 2 * held + 64:
            live = {id(m) for m in messages}
            live.update(id(m) for j in self._joined.values() for m in j.sources)
            self._messages = {k: v for k, v in self._messages.items() if k in live}

    # -- system and tools -------------------------------------------------------------

    def _system_bytes(self, system: list[SystemBlock]) -> bytes:
        key = tuple(system)
        if key != self._system_key:
            text = "\n\n".join(block.text for block in system)
            self._system = encode({"role": "system", "content": text}) if text else b""
            self._system_key = key
        return self._system

    def _tools_bytes(self, tools: list[ToolSpec]) -> bytes:
        # Schemas are cached per tool model (tools/base.py), so their identity is a key.
        key = tuple((t.name, t.description, id(t.input_schema), t.server) for t in tools)
        if key != self._tools_key:
            params = tool_params(tools)
            self._tools_key, self._tools = key, encode(params) if params else b""
            self._tool_schemas = [t.input_schema for t in tools]
        return self._tools
