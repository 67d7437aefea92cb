"""A fake Anthropic Messages API that plays a script in the real wire format.

``POST /v1/messages`` with ``"stream": true`` answers with the real SSE sequence
(``message_start``, ``ping``, ``content_block_start``/``_delta``/``_stop`` with text split in
several ``text_delta``s, ``thinking_delta`` + ``signature_delta``, tool input in several
partial-JSON ``input_json_delta``s, ``message_delta``, ``message_stop``); without it, the
full message JSON. Script faults become the API's real failure modes (see ``FAULT_STATUS``
and ``_stream``). Use it from tests::

    with FakeAnthropicServer([[{"type": "text", "text": "hi"}]]) as server:
        provider = AnthropicProvider("claude-sonnet-4-6", base_url=server.base_url, api_key="k")
        ...
    server.assert_complete()

or as a process: ``python -m tether.testing.fake_anthropic --script FILE [--port N]``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from tether.providers.script import (
    ScriptText,
    ScriptThinking,
    ScriptTurn,
    ScriptUsage,
    ScriptWebSearch,
    tool_use_id,
)
from tether.testing import fake_web_search
from tether.testing.sse import FakeModelServer, Reply, serve_main

RETRY_FAST = {"retry-after-ms": "10"}
FAULT_STATUS: dict[str, tuple[int, str, str, dict[str, str]]] = {
    "429": (429, "rate_limit_error", "Number of requests has exceeded your rate limit", RETRY_FAST),
    "529": (529, "overloaded_error", "Overloaded", RETRY_FAST),
    "500": (500, "api_error", "Internal server error", {}),
    "prompt_too_long": (
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
        {},
    ),
}
_CUT_BLOCK_TYPE = {"cut_mid_tool_input": "tool_use", "cut_mid_text": "text"}
_PIECES = 3
"""Text and tool input are streamed in (about) this many deltas."""


class FakeAnthropicServer(FakeModelServer):
    route = "/v1/messages"
    label = "fake Anthropic API"

    def error_body(self, status: int, message: str) -> Any:
        kind = "invalid_request_error" if status < 500 else "api_error"
        return _error(kind, message)

    def expectation_haystack(self, body: dict[str, Any]) -> str:
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        users = [m for m in messages if m.get("role") == "user"]
        return json.dumps(users[-1], ensure_ascii=False) if users else ""

    def respond(self, index: int, turn: ScriptTurn, body: dict[str, Any], reply: Reply) -> None:
        problem = fake_web_search.check_request(body)
        if problem is not None:
            return reply.json(400, _error("invalid_request_error", problem))
        fault = turn.fault
        if fault in FAULT_STATUS:
            status, kind, message, headers = FAULT_STATUS[fault]
            return reply.json(status, _error(kind, message), headers)
        blocks = _blocks(index, turn)
        model = str(body.get("model", "claude-fake"))
        if body.get("stream"):
            return _stream(index, turn, blocks, model, reply)
        if fault == "overloaded_mid_stream":
            return reply.json(529, _error("overloaded_error", "Overloaded"), RETRY_FAST)
        if fault is not None:  # a cut: the connection drops before any response
            return reply.cut()
        if _truncates_tool(turn, blocks):
            blocks[-1] = {**blocks[-1], "input": {}}
        message = _message(index, model, blocks, turn.effective_stop_reason, turn.usage)
        reply.json(200, message)


def _stream(
    index: int, turn: ScriptTurn, blocks: list[dict[str, Any]], model: str, reply: Reply
) -> None:
    reply.start_events()
    start = _message(index, model, [], None, turn.usage, output_tokens=1)
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
            _send_delta(reply, i, deltas[0])
            return _overloaded(reply)
        if i == len(blocks) - 1 and _truncates_tool(turn, blocks):
            partial = json.dumps(block["input"])
            deltas = [_json_delta(p) for p in _split(partial[: len(partial) // 2])]
        for delta in deltas:
            _send_delta(reply, i, delta)
        reply.sse({"type": "content_block_stop", "index": i}, event="content_block_stop")
    delta = {"stop_reason": turn.effective_stop_reason, "stop_sequence": None}
    usage = _usage(turn.usage)
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
            signature = _signature(block.thinking)
            out.append({"type": "thinking", "thinking": block.thinking, "signature": signature})
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
    if block["type"] == "web_search_tool_result":
        return block  # arrives whole, with no deltas
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
    # Like the API, open with an empty fragment, then the JSON in pieces.
    return [_json_delta(""), *(_json_delta(p) for p in _split(json.dumps(block["input"])))]


def _json_delta(partial: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": partial}


def _split(text: str) -> list[str]:
    if not text:
        return [""]
    size = max(-(-len(text) // _PIECES), 1)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _signature(thinking: str) -> str:
    return base64.b64encode(hashlib.sha256(thinking.encode()).digest()).decode()


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
    usage: ScriptUsage,
    *,
    output_tokens: int | None = None,
) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{index + 1:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(usage, output_tokens),
    }


def _usage(usage: ScriptUsage, output_tokens: int | None = None) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens if output_tokens is None else output_tokens,
    }


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


if __name__ == "__main__":
    raise SystemExit(serve_main(FakeAnthropicServer))
