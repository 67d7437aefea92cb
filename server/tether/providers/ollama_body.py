"""``POST /api/chat`` request bodies built by joining cached encodings (as ``openai_body``
does for chat completions: each message is converted and encoded once).

Every body carries what keeps Ollama from cutting a prompt silently:

* ``options.num_ctx``: the window Tether sizes the conversation to. Without it Ollama runs
  the model with a context of its own choosing (its docs, "Context length": 4k to 256k by
  the machine's memory, or ``OLLAMA_CONTEXT_LENGTH``).
* ``truncate: false``: by default Ollama drops the oldest messages of a prompt over
  ``num_ctx`` and says nothing (``server/prompt.go`` ``chatPrompt``); with it, such a prompt
  is refused with an error instead (``api/types.go`` ``ChatRequest.Truncate``, Ollama 0.12.6
  and later; older servers ignore the field and the turn notices a cut from the count).
* ``shift: false``: a reply that fills the context ends (``done_reason: "length"``) instead
  of the runner discarding the front of the context to go on (``ChatRequest.Shift``).
"""

from __future__ import annotations

from tether.core.messages import Message
from tether.providers.anthropic_body import encode
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec
from tether.providers.convert_ollama import assistant_message, user_messages
from tether.providers.convert_openai import tool_params
from tether.providers.joined_history import JoinedHistory


class _Encoded:
    __slots__ = ("message", "wire")

    def __init__(self, message: Message, wire: bytes) -> None:
        self.message = message
        self.wire = wire


class ChatBodyEncoder:
    """Builds request bodies (a provider keeps one for every conversation it serves)."""

    def __init__(self) -> None:
        self._history: JoinedHistory[_Encoded] = JoinedHistory(self._encode)
        self._tool_names: dict[str, str] = {}
        """Tool call id -> tool, from the assistant messages encoded: a result names both."""
        self._tools_key: tuple[object, ...] | None = None
        self._tools = b""
        self._tool_schemas: list[object] = []
        self._system_key: tuple[SystemBlock, ...] | None = None
        self._system = b""

    def body(
        self,
        request: ModelRequest,
        *,
        num_ctx: int,
        num_predict: int | None,
        think: bool | None,
        stream: bool,
    ) -> bytes:
        """The JSON body of ``/api/chat`` for ``request`` (its model set)."""
        messages = [m for m in (self._system_bytes(request.system), self._joined(request)) if m]
        parts = [b'{"model":%s,"messages":[%s]' % (encode(request.model), b",".join(messages))]
        tools = self._tools_bytes(request.tools)
        if tools:
            parts.append(b',"tools":' + tools)
        options = b'"num_ctx":%d' % num_ctx
        if num_predict is not None:
            options += b',"num_predict":%d' % num_predict
        parts.append(b',"options":{%s},"truncate":false,"shift":false' % options)
        if think is not None:
            parts.append(b',"think":%s' % (b"true" if think else b"false"))
        parts.append(b',"stream":%s}' % (b"true" if stream else b"false"))
        return b"".join(parts)

    def _encode(self, message: Message) -> _Encoded:
        if message.role == "assistant":
            for use in message.tool_uses:
                self._tool_names[use.id] = use.name
            wire = assistant_message(message)
            return _Encoded(message, encode(wire) if wire is not None else b"")
        params = user_messages(message, self._tool_names)
        return _Encoded(message, b",".join(encode(p) for p in params))

    def _joined(self, request: ModelRequest) -> bytes:
        messages = request.messages
        return self._history.join(messages, len(messages)) if messages else b""

    def _system_bytes(self, system: list[SystemBlock]) -> bytes:
        key = tuple(system)
        if key != self._system_key:
            text = "\n\n".join(block.text for block in system)
            self._system = encode({"role": "system", "content": text}) if text else b""
            self._system_key = key
        return self._system

    def _tools_bytes(self, tools: list[ToolSpec]) -> bytes:
        key = tuple((t.name, t.description, id(t.input_schema), t.server) for t in tools)
        if key != self._tools_key:
            params = tool_params(tools)
            self._tools_key, self._tools = key, encode(params) if params else b""
            self._tool_schemas = [t.input_schema for t in tools]
        return self._tools
