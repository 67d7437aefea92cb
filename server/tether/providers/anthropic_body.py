"""Messages API request bodies built by joining cached encodings.

A long session sends the same history again with every request; converting and encoding
all of it each time (and letting the SDK copy the parameter tree before encoding it again)
made each round-trip cost O(history). Here each message of the history is converted and
encoded once, and the body is the join of those bytes: per request only new messages are
encoded, plus the newest one again with its caching breakpoint.

The joining and its cache are ``joined_history``'s (shared with ``openai_body``).

The JSON is the same document ``convert_anthropic.request_params`` describes (the tests
compare both), sent compactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether.core.messages import Message
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec
from tether.providers.convert_anthropic import (
    MAX_CACHE_BREAKPOINTS,
    block_param,
    tool_param,
)
from tether.providers.joined_history import JoinedHistory

if TYPE_CHECKING:
    from anthropic.types import ThinkingConfigParam

_EPHEMERAL = {"type": "ephemeral"}


def encode(value: Any) -> bytes:
    """Compact JSON as UTF-8; text that cannot be UTF-8 (lone surrogates from undecodable
    bytes) is escaped as JSON allows, as the SDK's own encoder would."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


class _Encoded:
    """One message's content blocks in wire form, encoded; empty when nothing is sendable."""

    __slots__ = ("blocks", "kinds", "message", "role", "wire")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.role = message.role
        params = [p for b in message.content if (p := block_param(b)) is not None]
        self.kinds = [p.get("type") for p in params]
        self.blocks = [encode(p) for p in params]
        self.wire = (
            b'{"role":"%s","content":[%s]}' % (self.role.encode(), b",".join(self.blocks))
            if self.blocks
            else b""
        )

    def marked(self) -> bytes | None:
        """The message with a caching breakpoint on its last block that can carry one
        (thinking blocks cannot); None when it has no such block. The marker is added to the
        block's encoded object (the newest message is marked at every request: encoding it
        again would cost as much as the message is long)."""
        for i in range(len(self.kinds) - 1, -1, -1):
            if self.kinds[i] not in ("thinking", "redacted_thinking"):
                content = list(self.blocks)
                content[i] = _with_marker(self.blocks[i])
                return b'{"role":"%s","content":[%s]}' % (self.role.encode(), b",".join(content))
        return None


_MARKER = b'"cache_control":' + encode(_EPHEMERAL)


def _with_marker(block: bytes) -> bytes:
    """An encoded block object with ``cache_control`` as its last member (as
    ``{**param, "cache_control": ...}`` would encode). A block param never carries one of
    its own (``convert_anthropic.block_param``)."""
    return block[:-1] + (b"," if len(block) > 2 else b"") + _MARKER + b"}"


class BodyEncoder:
    """Builds request bodies (a provider keeps one for every conversation it serves)."""

    def __init__(self) -> None:
        self._history: JoinedHistory[_Encoded] = JoinedHistory(_Encoded)
        self._tools_key: tuple[object, ...] | None = None
        self._tools = b""
        self._tool_schemas: list[dict[str, Any]] = []
        """The schemas keyed by identity in ``_tools_key``, kept alive so ids stay unique."""
        self._system_key: tuple[SystemBlock, ...] | None = None
        self._system = b""

    def body(
        self,
        request: ModelRequest,
        *,
        max_tokens: int,
        thinking: ThinkingConfigParam | None,
        stream: bool,
    ) -> bytes:
        """The JSON body of ``messages.create`` for ``request`` (its model must be set)."""
        parts = [
            b'{"model":%s,"max_tokens":%d,"stream":%s'
            % (encode(request.model), max_tokens, b"true" if stream else b"false")
        ]
        breakpoints = 0
        if request.system:
            parts.append(b',"system":' + self._system_bytes(request.system))
            breakpoints += sum(1 for b in request.system if b.cache)
        if request.tools:
            parts.append(b',"tools":' + self._tools_bytes(request.tools))
            breakpoints += 1
        if thinking is not None:
            parts.append(b',"thinking":' + encode(thinking))
        messages, marked = self._messages_bytes(request.messages, request.cache_history)
        breakpoints += marked
        assert breakpoints <= MAX_CACHE_BREAKPOINTS, f"{breakpoints} cache breakpoints; max 4"
        parts.append(b',"messages":[' + messages + b"]}")
        return b"".join(parts)

    # -- messages ---------------------------------------------------------------------

    def _messages_bytes(
        self, messages: Sequence[Message], cache_history: bool
    ) -> tuple[bytes, int]:
        """The messages array's content, and how many breakpoints it carries (0 or 1)."""
        last = len(messages) - 1
        while last >= 0 and not self._history.encoded(messages[last]).wire:
            last -= 1
        if last < 0:
            return b"", 0
        head = self._history.join(messages, last)
        tail = self._history.encoded(messages[last])
        marked = tail.marked() if cache_history else None
        wire = marked or tail.wire
        return (head + b"," + wire if head else wire), 1 if marked else 0

    # -- system and tools -------------------------------------------------------------

    def _system_bytes(self, system: list[SystemBlock]) -> bytes:
        key = tuple(system)
        if key != self._system_key:
            blocks: list[dict[str, Any]] = []
            for block in system:
                param: dict[str, Any] = {"type": "text", "text": block.text}
                if block.cache:
                    param["cache_control"] = _EPHEMERAL
                blocks.append(param)
            self._system_key, self._system = key, encode(blocks)
        return self._system

    def _tools_bytes(self, tools: list[ToolSpec]) -> bytes:
        # Schemas are cached per tool model (tools/base.py), so their identity is a key.
        key = tuple((t.name, t.description, id(t.input_schema), t.server) for t in tools)
        if key != self._tools_key:
            params: list[Any] = [tool_param(t) for t in tools]
            params[-1] = {**params[-1], "cache_control": _EPHEMERAL}
            self._tools_key, self._tools = key, encode(params)
            self._tool_schemas = [t.input_schema for t in tools]
        return self._tools
