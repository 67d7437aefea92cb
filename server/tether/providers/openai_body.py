"""Chat completions request bodies built by joining cached encodings.

As for the Messages API (``anthropic_body``): each message of the history is converted
(``convert_openai``) and encoded once, and the body is the join of those bytes, so a
request costs the encoding of the messages new since the previous one, not of the whole
history; the SDK's parameter transform, which walks the whole tree, is skipped (the body
is posted as raw content).

The joining and its cache are ``joined_history``'s.

The JSON is the document ``request_messages``/``tool_params`` describe (the tests compare
both).
"""

from __future__ import annotations

from tether.core.messages import Message
from tether.providers.anthropic_body import encode
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec
from tether.providers.convert_openai import message_params, tool_params
from tether.providers.joined_history import JoinedHistory


class _Encoded:
    """One message as chat completions messages (a user message may become several: its
    tool results, then its text), encoded and joined; empty when nothing is sendable."""

    __slots__ = ("message", "wire")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.wire = b",".join(encode(p) for p in message_params(message))


class ChatBodyEncoder:
    """Builds request bodies (a provider keeps one for every conversation it serves)."""

    def __init__(self) -> None:
        self._history: JoinedHistory[_Encoded] = JoinedHistory(_Encoded)
        self._tools_key: tuple[object, ...] | None = None
        self._tools = b""
        self._tool_schemas: list[object] = []
        """The schemas keyed by identity in ``_tools_key``, kept alive so ids stay unique."""
        self._system_key: tuple[SystemBlock, ...] | None = None
        self._system = b""

    def body(self, request: ModelRequest, *, max_tokens: int | None, stream: bool) -> bytes:
        """The JSON body of ``chat.completions.create`` for ``request`` (its model set)."""
        messages = [
            m for m in (self._system_bytes(request.system), self._history_bytes(request)) if m
        ]
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

    def _history_bytes(self, request: ModelRequest) -> bytes:
        messages = request.messages
        return self._history.join(messages, len(messages)) if messages else b""

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
