"""A fake Anthropic Messages API that plays a script in the real wire format, and refuses
what the real API refuses.

``POST /v1/messages`` with ``"stream": true`` answers with the real SSE sequence
(``message_start``, ``ping``, ``content_block_start``/``_delta``/``_stop`` with text split in
several ``text_delta``s, ``thinking_delta`` + ``signature_delta``, tool input in several
partial-JSON ``input_json_delta``s, ``message_delta``, ``message_stop``); without it, the
full message JSON. Script faults become the API's real failure modes (see ``FAULT_STATUS``
and ``_stream``).

Every request is first checked like the real API checks it (``anthropic_rules``: unknown
fields, empty text, tool_use/tool_result pairing, cache marks, tool names, thinking rules and
signatures, the model's output limit and context window). A refused request gets the real
400 error JSON, consumes no scripted turn and is kept in ``rejected``; ``assert_complete``
fails on any refusal but ``prompt is too long`` (a window the client is expected to meet
and recover from). The window is the model's (``providers/models.json``) unless the
server or the script sets ``context_window``. Use it from tests::

    with FakeAnthropicServer([[{"type": "text", "text": "hi"}]]) as server:
        provider = AnthropicProvider("claude-sonnet-4-6", base_url=server.base_url, api_key="k")
        ...
    server.assert_complete()

or as a process: ``python -m tether.testing.fake_anthropic --script FILE [--port N]``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any, cast

from tether.providers.models import anthropic_limits
from tether.providers.overflow import is_overflow
from tether.providers.script import (
    Script,
    ScriptRedactedThinking,
    ScriptText,
    ScriptThinking,
    ScriptTurn,
    ScriptUsage,
    ScriptWebSearch,
    tool_use_id,
)
from tether.testing import fake_web_search
from tether.testing.anthropic_checker import RequestChecker
from tether.testing.anthropic_headers import betas_of, check_headers
from tether.testing.anthropic_rules import (
    ApiError,
    RequestContext,
    count_input_tokens,
    redacted_data,
    sign,
)
from tether.testing.anthropic_wire import lone_surrogate_error
from tether.testing.serve import serve_main
from tether.testing.sse import FakeModelServer, Reply

NO_SYSTEM_MESSAGES = ("claude-opus-4-8",)
"""Models that refuse ``role: "system"`` messages (Claude Code 2.1.337's ``Rv``: mid-
conversation system messages are on for every model but these)."""
RETRY_FAST = {"retry-after-ms": "10"}
FAULT_STATUS: dict[str, tuple[int, str, str, dict[str, str]]] = {
    "429": (429, "rate_limit_error", "Number of requests has exceeded your rate limit", RETRY_FAST),
    "529": (529, "overloaded_error", "Overloaded", RETRY_FAST),
    "500": (500, "api_error", "Internal server error", {}),
}
_CUT_BLOCK_TYPE = {"cut_mid_tool_input": "tool_use", "cut_mid_text": "text"}
_PIECES = 3
"""Text and tool input are streamed in (about) this many deltas."""


class FakeAnthropicServer(FakeModelServer):
    route = "/v1/messages"
    label = "fake Anthropic API"

    def __init__(
        self,
        script: Script | list[Any] | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        api_keys: set[str] | None = None,
        window_counts_output: bool = False,
    ):
        super().__init__(script, host=host, port=port)
        self.window_counts_output = window_counts_output
        """The window bounds input and ``max_tokens`` together (``anthropic_rules``)."""
        self.api_keys = api_keys
        """Set: only these keys (``x-api-key`` or ``Authorization: Bearer``) are accepted;
        None: any key. A request without one gets the API's 401 ``authentication_error``."""
        self.context_window = context_window or self.script.context_window
        """None: each model's own window."""
        self.max_output_tokens = max_output_tokens
        self.rejected: list[ApiError] = []
        """Every request refused by the API's rules, in order."""
        self.input_tokens: list[int] = []
        """Input tokens (by the documented rule) of every accepted request."""
        self._thought_before_tools: set[str] = set()
        self._checker = RequestChecker(also=fake_web_search.check_request)
        self._counted: dict[int, tuple[dict[str, Any], int]] = {}
        """Input tokens of accepted bodies (by ``id``; the body is kept so the id stays
        its own) until they are answered."""

    def handle_request(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        error = lone_surrogate_error(raw)
        if error is None:
            return super().handle_request(handler, raw)
        self.rejected.append(error)
        Reply(handler).json(error.status, error.body())

    def error_body(self, status: int, message: str) -> Any:
        kind = "invalid_request_error" if status < 500 else "api_error"
        return _error(kind, message)

    def expectation_haystack(self, body: dict[str, Any]) -> str:
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        users = [m for m in messages if m.get("role") == "user"]
        return json.dumps(users[-1], ensure_ascii=False) if users else ""

    def window_for(self, model: str) -> int:
        return self.context_window or anthropic_limits(model).window

    def reject(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any] | None:
        model = body.get("model")
        error = check_headers(headers, self.api_keys)
        if error is not None:
            pass
        elif not isinstance(model, str) or not model.startswith("claude-"):
            error = ApiError(404, "not_found_error", f"model: {model}")
        else:
            limits = anthropic_limits(model)
            if self.max_output_tokens:
                limits = type(limits)(
                    limits.window, self.max_output_tokens, limits.default_output, limits.thinking
                )
            ctx = RequestContext(
                limits,
                self.window_for(model),
                self._thought_before_tools,
                betas_of(headers),
                system_messages=not model.startswith(NO_SYSTEM_MESSAGES),
                window_counts_output=self.window_counts_output,
            )
            verdict = self._checker.check(body, ctx)
            error = verdict.error
            if error is None:
                self.input_tokens.append(verdict.tokens)
                with self._lock:
                    self._counted[id(body)] = (body, verdict.tokens)
                return None
        self.rejected.append(error)
        return error.status, error.body()

    def serve_other(
        self, method: str, path: str, body: dict[str, Any] | None, reply: Reply
    ) -> bool:
        """``GET /v1/models/{model_id}`` (the Models API's "Get a Model", which ``tether
        doctor`` asks): a credential is required, as on the real API; a model the Messages
        route would take is found, any other is the API's 404 ``not_found_error``."""
        prefix = "/v1/models/"
        if method != "GET" or not path.startswith(prefix) or len(path) == len(prefix):
            return False
        model = path.removeprefix(prefix)
        headers = reply.request_headers
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if not key:
            reply.json(401, _error("authentication_error", "x-api-key header is required"))
        elif self.api_keys is not None and key not in self.api_keys:
            reply.json(401, _error("authentication_error", "invalid x-api-key"))
        elif not model.startswith("claude-"):
            reply.json(404, _error("not_found_error", f"model: {model}"))
        else:
            info = {"type": "model", "id": model, "display_name": model}
            reply.json(200, {**info, "created_at": "2025-01-01T00:00:00Z"})
        return True

    def problems(self) -> list[str]:
        refused = [
            f"refused a request: {e.message}" for e in self.rejected if not is_overflow(e.message)
        ]
        return [*super().problems(), *refused]

    def _tokens(self, body: dict[str, Any]) -> int:
        with self._lock:
            kept, tokens = self._counted.pop(id(body), (None, 0))
        return tokens if kept is body else count_input_tokens(body)

    def respond(self, index: int, turn: ScriptTurn, body: dict[str, Any], reply: Reply) -> None:
        counted = self._tokens(body)
        fault = turn.fault
        model = str(body.get("model", "claude-fake"))
        if fault == "prompt_too_long":
            window = self.window_for(model)
            tokens = max(counted, window + 1)
            error = _error(
                "invalid_request_error", f"prompt is too long: {tokens} tokens > {window} maximum"
            )
            return reply.json(400, error)
        if fault in FAULT_STATUS:
            status, kind, message, headers = FAULT_STATUS[fault]
            return reply.json(status, _error(kind, message), headers)
        config = body.get("thinking")
        thinking_on = isinstance(config, dict) and cast("dict[str, Any]", config).get("type") in (
            "enabled",
            "adaptive",
        )
        if not thinking_on and any(
            isinstance(b, ScriptThinking | ScriptRedactedThinking) for b in turn.blocks
        ):
            message = f"turn {index + 1} scripts thinking, but the request has thinking off"
            return self.fail(reply, 500, message)
        blocks = _blocks(index, turn)
        if blocks and blocks[0]["type"] in ("thinking", "redacted_thinking"):
            self._thought_before_tools.update(b["id"] for b in blocks if b["type"] == "tool_use")
        usage = _usage_for(turn.usage, counted)
        if body.get("stream"):
            return _stream(index, turn, blocks, model, usage, reply)
        if fault == "overloaded_mid_stream":
            return reply.json(529, _error("overloaded_error", "Overloaded"), RETRY_FAST)
        if fault is not None:  # a cut: the connection drops before any response
            return reply.cut()
        if _truncates_tool(turn, blocks):
            blocks[-1] = {**blocks[-1], "input": {}}
        message = _message(index, model, blocks, turn.effective_stop_reason, usage)
        reply.json(200, message)


def _usage_for(usage: ScriptUsage, counted: int) -> dict[str, int]:
    """The response's usage: input by the token rule (less scripted cache hits) unless the
    script fixes it."""
    cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    input_tokens = usage.input_tokens
    if input_tokens is None:
        input_tokens = max(counted - cached, 0)
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
    }


def _stream(
    index: int,
    turn: ScriptTurn,
    blocks: list[dict[str, Any]],
    model: str,
    usage: dict[str, int],
    reply: Reply,
) -> None:
    reply.start_events()
    start = _message(index, model, [], None, {**usage, "output_tokens": 1})
    reply.sse({"type": "message_start", "message": start}, event="message_start")
    reply.sse({"type": "ping"}, event="ping")
    cut_type = _CUT_BLOCK_TYPE.get(turn.fault or "")
    if cut_type is not None and not any(b["type"] == cut_type for b in blocks):
        return reply.cut()
    if turn.fault == "overloaded_mid_stream" and not blocks:
        return _overloaded(reply)
    for i, block in enumerate(blocks):
        reply.sse(
            {"type": "content_block_start", "index": i, "content_block": _opening(block)},
            event="content_block_start",
        )
        deltas = _deltas(block)
        if block["type"] == cut_type:
            for delta in deltas[: max(len(deltas) // 2, 1)]:
                _send_delta(reply, i, delta)
            return reply.cut()
        if turn.fault == "overloaded_mid_stream":
            if deltas:
                _send_delta(reply, i, deltas[0])
            return _overloaded(reply)
        if i == len(blocks) - 1 and _truncates_tool(turn, blocks):
            partial = json.dumps(block["input"])
            deltas = [_json_delta(p) for p in _split(partial[: len(partial) // 2])]
        for delta in deltas:
            _send_delta(reply, i, delta)
        reply.sse({"type": "content_block_stop", "index": i}, event="content_block_stop")
    delta = {"stop_reason": turn.effective_stop_reason, "stop_sequence": None}
    reply.sse({"type": "message_delta", "delta": delta, "usage": usage}, event="message_delta")
    reply.sse({"type": "message_stop"}, event="message_stop")
    reply.end()


def _overloaded(reply: Reply) -> None:
    # The API reports mid-stream failures as an SSE error event, then ends the body.
    reply.sse(_error("overloaded_error", "Overloaded"), event="error")
    reply.end()


def _send_delta(reply: Reply, index: int, delta: dict[str, Any]) -> None:
    event = {"type": "content_block_delta", "index": index, "delta": delta}
    reply.sse(event, event="content_block_delta")


def _blocks(index: int, turn: ScriptTurn) -> list[dict[str, Any]]:
    """The turn's content blocks as the API returns them (ids and signatures filled in)."""
    out: list[dict[str, Any]] = []
    for b_index, block in enumerate(turn.blocks):
        if isinstance(block, ScriptText):
            out.append(fake_web_search.text_block(block))
        elif isinstance(block, ScriptWebSearch):
            out += fake_web_search.search_blocks(index, b_index, block)
        elif isinstance(block, ScriptThinking):
            signature = sign(block.thinking)
            out.append({"type": "thinking", "thinking": block.thinking, "signature": signature})
        elif isinstance(block, ScriptRedactedThinking):
            out.append({"type": "redacted_thinking", "data": redacted_data(f"{index}:{b_index}")})
        else:
            use_id = block.id or tool_use_id(index, b_index)
            out.append({"type": "tool_use", "id": use_id, "name": block.name, "input": block.input})
    return out


def _opening(block: dict[str, Any]) -> dict[str, Any]:
    """A block as ``content_block_start`` announces it: empty, filled by deltas."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if block["type"] in ("redacted_thinking", "web_search_tool_result"):
        return block  # sent whole: it has no deltas
    return {**block, "input": {}}


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "text":
        cites = [{"type": "citations_delta", "citation": c} for c in block.get("citations", [])]
        return [*cites, *({"type": "text_delta", "text": t} for t in _split(block["text"]))]
    if block["type"] == "web_search_tool_result":
        return []
    if block["type"] == "thinking":
        thinking = [{"type": "thinking_delta", "thinking": t} for t in _split(block["thinking"])]
        return [*thinking, {"type": "signature_delta", "signature": block["signature"]}]
    if block["type"] == "redacted_thinking":
        return []
    # Like the API, open with an empty fragment, then the JSON in pieces.
    return [_json_delta(""), *(_json_delta(p) for p in _split(json.dumps(block["input"])))]


def _json_delta(partial: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": partial}


def _split(text: str) -> list[str]:
    if not text:
        return [""]
    size = max(-(-len(text) // _PIECES), 1)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _truncates_tool(turn: ScriptTurn, blocks: list[dict[str, Any]]) -> bool:
    """A max_tokens turn ending in a tool_use: its input is cut off."""
    return (
        turn.effective_stop_reason == "max_tokens"
        and bool(blocks)
        and blocks[-1]["type"] == "tool_use"
    )


def _message(
    index: int,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str | None,
    usage: dict[str, int],
) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{index + 1:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


if __name__ == "__main__":
    raise SystemExit(serve_main(FakeAnthropicServer))
