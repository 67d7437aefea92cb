"""A fake OpenAI-compatible chat-completions server that plays a script.

``POST /v1/chat/completions`` with ``"stream": true`` answers with ``chat.completion.chunk``
events (text split in several ``content`` deltas, thinking as ``reasoning_content`` deltas
the way vLLM sends it, tool calls as ``tool_calls`` deltas with partial argument strings), a
usage chunk when ``stream_options.include_usage`` is set, and ``data: [DONE]``; without it,
one ``chat.completion``. ``start()`` returns the base URL *with* ``/v1``, as the OpenAI SDK
expects it. Faults: 429, 529 (as 503), 500, prompt_too_long (400 context length exceeded),
overloaded_mid_stream (an error chunk), cut_mid_text, cut_mid_tool_input.

Requests are checked as vLLM, llama.cpp, LiteLLM or Ollama check them (``openai_rules``:
context length, tool call pairing, the served model) and refused with their error JSON; a
refusal consumes no turn and is kept in ``rejected`` (Ollama cuts instead of refusing; the
fake records that in ``truncated``). Each flavour reports its window where the real server
does (``openai_discovery``), unless ``announce_window`` is off.

Process mode: ``python -m tether.testing.fake_openai --script FILE [--port N]``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tether.providers.overflow import is_overflow
from tether.providers.script import (
    Script,
    ScriptRedactedThinking,
    ScriptText,
    ScriptThinking,
    ScriptToolUse,
    ScriptTurn,
    ScriptUsage,
    tool_use_id,
)
from tether.testing.openai_discovery import TRAINED_CONTEXT, serve_discovery
from tether.testing.openai_rules import (
    Flavor,
    ServerError,
    check_chat_request,
    count_prompt_tokens,
    overflow_error,
    truncated_prompt,
)
from tether.testing.serve import serve_main
from tether.testing.sse import FakeModelServer, Refusal, Reply

DEFAULT_CONTEXT = 32_768

RETRY_FAST = {"retry-after-ms": "10"}
FAULT_STATUS: dict[str, tuple[int, str, str, dict[str, str]]] = {
    "429": (429, "rate_limit_exceeded", "Rate limit reached, please retry", RETRY_FAST),
    "529": (503, "server_overloaded", "The server is overloaded", RETRY_FAST),
    "500": (500, "server_error", "Internal server error", {}),
}
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
_PIECES = 3


class FakeOpenAIServer(FakeModelServer):
    route = "/v1/chat/completions"
    label = "fake OpenAI-compatible API"

    def __init__(
        self,
        script: Script | list[Any] | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        send_usage: bool = True,
        flavor: Flavor = "vllm",
        context_window: int | None = None,
        served_model: str | None = None,
        announce_window: bool = True,
    ):
        super().__init__(script, host=host, port=port)
        self.announce_window = announce_window
        """False: the window is enforced but reported nowhere (a server behind a proxy that
        only forwards chat completions)."""
        self.send_usage = send_usage
        """False plays a server that ignores ``stream_options.include_usage``."""
        self.flavor: Flavor = flavor
        self.context_window = context_window or self.script.context_window or DEFAULT_CONTEXT
        self.served_model = served_model
        """None: any model name is served."""
        self.rejected: list[ServerError] = []
        self.prompt_tokens: list[int] = []
        self.truncated: list[int] = []
        """Prompt tokens of the requests Ollama would have cut silently (a problem)."""
        self.modelfile_num_ctx = False
        """Ollama: the model's Modelfile sets ``num_ctx`` (else the server's default)."""
        self.loaded = False
        """Ollama: the model is loaded (``/api/ps`` lists it)."""
        self.trained_context = TRAINED_CONTEXT
        """Ollama: the model's trained length (``/api/show``'s ``model_info``)."""
        self.remote = False
        """Ollama: a cloud model (``/api/show`` names its ``remote_host``; ``/api/ps``
        never lists it: it runs elsewhere, at its trained length)."""
        self.empty_on_overflow = False
        """Answer a prompt over the window with an empty message (200, no content, no tool
        call, ``finish_reason: "stop"``, the prompt's tokens in ``usage``) instead of the
        flavour's refusal, as LM Studio's GGUF runner does
        (lmstudio-ai/lmstudio-bug-tracker#2339). Consumes no turn; kept in ``rejected``."""

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def reject(self, body: dict[str, Any], headers: dict[str, str]) -> Refusal | None:
        error = check_chat_request(
            body, window=self.context_window, flavor=self.flavor, served_model=self.served_model
        )
        if error is None:
            prompt = count_prompt_tokens(body)
            self.prompt_tokens.append(prompt)
            if self.flavor == "ollama" and prompt > self.context_window - 1:
                self.truncated.append(prompt)
            return None
        if self.empty_on_overflow and is_overflow(error.message):
            prompt = count_prompt_tokens(body)
            message = f"an empty answer to a {prompt}-token prompt over the context window"
            self.rejected.append(ServerError(200, message, self.flavor))
            return lambda reply: _empty(reply, body, prompt)
        self.rejected.append(error)
        return error.status, error.body()

    def problems(self) -> list[str]:
        refused = [
            f"refused a request: {e.message}" for e in self.rejected if not is_overflow(e.message)
        ]
        cut = [
            f"a {p}-token prompt was cut silently to the {self.context_window}-token context"
            for p in self.truncated
        ]
        return [*super().problems(), *refused, *cut]

    def serve_other(
        self, method: str, path: str, body: dict[str, Any] | None, reply: Reply
    ) -> bool:
        return serve_discovery(self, method, path, body, reply)

    def error_body(self, status: int, message: str) -> Any:
        return _error("invalid_request_error" if status < 500 else "server_error", message)

    def expectation_haystack(self, body: dict[str, Any]) -> str:
        # The newest user input is everything after the last assistant message: tool
        # results arrive as "tool" messages, the rest as a "user" message.
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        tail: list[dict[str, Any]] = []
        for message in reversed(messages):
            if message.get("role") in ("assistant", "system"):
                break
            tail.insert(0, message)
        return json.dumps(tail, ensure_ascii=False)

    def respond(self, index: int, turn: ScriptTurn, body: dict[str, Any], reply: Reply) -> None:
        fault = turn.fault
        prompt = count_prompt_tokens(body)
        if self.flavor == "ollama":
            self.loaded = not self.remote
            prompt = truncated_prompt(prompt, self.context_window)
        if fault == "prompt_too_long":
            tokens = max(prompt, self.context_window + 1)
            error = overflow_error(self.flavor, tokens, self.context_window)
            return reply.json(error.status, error.body())
        if fault in FAULT_STATUS:
            status, code, message, headers = FAULT_STATUS[fault]
            return reply.json(status, _error("invalid_request_error", message, code), headers)
        if any(isinstance(b, ScriptRedactedThinking) for b in turn.blocks):
            return self.fail(
                reply, 500, f"turn {index + 1}: chat completions has no redacted thinking"
            )
        model = str(body.get("model", "fake-model"))
        usage = _usage(turn.usage, prompt)
        if body.get("stream"):
            options: dict[str, Any] = body.get("stream_options") or {}
            include = self.send_usage and bool(options.get("include_usage"))
            return _stream(_Chunks(index, model), turn, reply, usage if include else None)
        if fault == "overloaded_mid_stream":
            return reply.json(503, _error("server_error", "The server is overloaded"), RETRY_FAST)
        if fault is not None:
            return reply.cut()
        reply.json(200, _completion(index, model, turn, usage))


class _Chunks:
    """Builds ``chat.completion.chunk`` objects for one response."""

    def __init__(self, index: int, model: str):
        self.id = f"chatcmpl-fake-{index + 1:04d}"
        self.index = index
        self.model = model
        self.created = int(time.time())

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return {**self._head(), "choices": [choice]}

    def usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        return {**self._head(), "choices": [], "usage": usage}

    def _head(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }


def _stream(chunks: _Chunks, turn: ScriptTurn, reply: Reply, usage: dict[str, Any] | None) -> None:
    reply.start_events()
    reply.sse(chunks.chunk({"role": "assistant", "content": ""}))
    fault = turn.fault
    truncated = _truncates_tool(turn)
    calls = 0
    for b_index, block in enumerate(turn.blocks):
        if isinstance(block, ScriptText | ScriptThinking):
            field = "content" if isinstance(block, ScriptText) else "reasoning_content"
            pieces = _split(block.text if isinstance(block, ScriptText) else block.thinking)
            if fault == "cut_mid_text" and isinstance(block, ScriptText):
                for piece in pieces[: max(len(pieces) // 2, 1)]:
                    reply.sse(chunks.chunk({field: piece}))
                return reply.cut()
            for piece in pieces:
                reply.sse(chunks.chunk({field: piece}))
        elif isinstance(block, ScriptToolUse):
            opening = {
                "index": calls,
                "id": block.id or tool_use_id(chunks.index, b_index),
                "type": "function",
                "function": {"name": block.name, "arguments": ""},
            }
            reply.sse(chunks.chunk({"tool_calls": [opening]}))
            arguments = json.dumps(block.input)
            if truncated and b_index == len(turn.blocks) - 1:
                arguments = arguments[: len(arguments) // 2]
            pieces = _split(arguments)
            if fault == "cut_mid_tool_input":
                pieces = pieces[: max(len(pieces) // 2, 1)]
            for piece in pieces:
                delta = {"index": calls, "function": {"arguments": piece}}
                reply.sse(chunks.chunk({"tool_calls": [delta]}))
            if fault == "cut_mid_tool_input":
                return reply.cut()
            calls += 1
        if fault == "overloaded_mid_stream":
            break
    if fault == "overloaded_mid_stream":
        reply.sse(_error("server_error", "The server is overloaded"))
        return reply.end()
    if fault is not None:  # a cut with no block of its kind: cut before finishing
        return reply.cut()
    reply.sse(chunks.chunk({}, _FINISH[turn.effective_stop_reason]))
    if usage is not None:
        reply.sse(chunks.usage(usage))
    reply.sse("[DONE]")
    reply.end()


def _empty(reply: Reply, body: dict[str, Any], prompt: int) -> None:
    """A message with nothing in it, stopped by itself, the whole prompt counted."""
    usage = {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt}
    model = str(body.get("model", "fake-model"))
    if not body.get("stream"):
        empty = ScriptTurn.model_validate({"blocks": [], "stop_reason": "end_turn"})
        return reply.json(200, _completion(0, model, empty, usage))
    chunks = _Chunks(0, model)
    reply.start_events()
    reply.sse(chunks.chunk({"role": "assistant", "content": ""}))
    reply.sse(chunks.chunk({}, "stop"))
    options: dict[str, Any] = body.get("stream_options") or {}
    if options.get("include_usage"):
        reply.sse(chunks.usage(usage))
    reply.sse("[DONE]")
    reply.end()


def _completion(index: int, model: str, turn: ScriptTurn, usage: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    text = "".join(b.text for b in turn.blocks if isinstance(b, ScriptText))
    thinking = "".join(b.thinking for b in turn.blocks if isinstance(b, ScriptThinking))
    if text:
        message["content"] = text
    if thinking:
        message["reasoning_content"] = thinking
    calls: list[dict[str, Any]] = []
    for b_index, block in enumerate(turn.blocks):
        if not isinstance(block, ScriptToolUse):
            continue
        arguments = json.dumps(block.input)
        if _truncates_tool(turn) and b_index == len(turn.blocks) - 1:
            arguments = arguments[: len(arguments) // 2]
        function = {"name": block.name, "arguments": arguments}
        calls.append(
            {
                "id": block.id or tool_use_id(index, b_index),
                "type": "function",
                "function": function,
            }
        )
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "finish_reason": _FINISH[turn.effective_stop_reason]}
    return {
        "id": f"chatcmpl-fake-{index + 1:04d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": usage,
    }


def _truncates_tool(turn: ScriptTurn) -> bool:
    last = turn.blocks[-1] if turn.blocks else None
    is_tool = isinstance(last, ScriptToolUse)
    return turn.effective_stop_reason == "max_tokens" and is_tool


def _split(text: str) -> list[str]:
    if not text:
        return [""]
    size = max(-(-len(text) // _PIECES), 1)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _usage(usage: ScriptUsage, counted: int) -> dict[str, Any]:
    """Prompt tokens by the token rule unless the script fixes them."""
    prompt = counted
    if usage.input_tokens is not None:
        prompt = (
            usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
    }


def _error(kind: str, message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


if __name__ == "__main__":
    raise SystemExit(serve_main(FakeOpenAIServer))
