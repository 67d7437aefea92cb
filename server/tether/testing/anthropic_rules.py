"""What the real Messages API refuses, checked on every request the fake API receives.

``anthropic_checker.check_request`` returns the first violation as an ``ApiError``
carrying the real status, error type and message wording (``{"type": "error", "error": {"type":
"invalid_request_error", "message": ...}}``, HTTP 400), or None. Each rule's evidence (a
documentation page, the SDK's types, a captured answer or request) is in the table of
docs/testing.md; the headers are checked first (``anthropic_headers``). The rules:

* unknown fields anywhere (top level, messages, blocks, tools, ``cache_control``,
  ``thinking``): ``<path>: Extra inputs are not permitted``; unknown block types;
* empty or whitespace-only text blocks (also inside tool results and the system prompt);
* after merging consecutive same-role messages (the API does that first): every
  ``tool_use`` answered by a ``tool_result`` at the start of the next message, no
  ``tool_result`` without its ``tool_use`` in the previous message, unique ``tool_use`` ids;
* at most 4 ``cache_control`` marks; no ``ttl: 1h`` mark after a 5-minute one (in the
  order tools, system, messages);
* tool names ``^[a-zA-Z0-9_-]{1,64}$`` and unique;
* ``max_tokens`` within the model's output limit;
* thinking: ``budget_tokens`` >= 1024 and < ``max_tokens``; an assistant message with
  thinking starts with it; in a tool loop the final assistant message starts with its
  thinking block when the original response had one (always, with ``type: enabled``);
  every thinking block's signature is one this fake issued for exactly that text (the
  fake signs with HMAC-SHA256 under a fixed key, so signatures stay valid across fake
  instances, like the real ones across requests);
* ``role: "system"`` messages (text only) without a beta, on every model but those the fake
  names (Claude Code 2.1.337's binary: ``mid-conversation-system-2026-04-07`` "is generally
  available; the header is not sent"); a per-message ``output_config`` only under the
  ``per-turn-control-2026-07-01`` beta (its ``per_message_effort``); they take no part in
  merging and tool pairing;
* the context window: the request's input tokens, counted by ``count_input_tokens``,
  must not exceed the window: ``prompt is too long: N tokens > M maximum``; where the
  server is told the window bounds input and output together (``window_counts_output``),
  nor may they with ``max_tokens``: ``input length and `max_tokens` exceed context limit:
  N + K > M, decrease input length or `max_tokens` and try again`` (captured answers:
  continuedev/continue#6080, anthropics/claude-code#408, docker/docker-agent#569).

**Token rule** (documented in docs/testing.md too): input tokens =
``ceil(len(utf8(json.dumps({"system", "tools", "messages"}, ensure_ascii=False,
separators=(",", ":"), sort_keys=True))) / 4)`` — the JSON of the three request fields as
sent. The fake reports ``usage.input_tokens`` by the same rule (less scripted cache reads).
"""

from __future__ import annotations

import re
from typing import Any, cast

from tether.testing.anthropic_thinking import (
    redacted_data,
    sign,
)
from tether.testing.anthropic_wire import (
    ApiError,
    RequestContext,
    as_dict,
    as_list,
    count_input_tokens,
    extra,
    fail,
    invalid,
    uses,
)

__all__ = [
    "ApiError",
    "RequestContext",
    "count_input_tokens",
    "invalid",
    "redacted_data",
    "sign",
]

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_CACHE_MARKS = 4
PER_TURN_CONTROL = "per-turn-control-2026-07-01"

TOP_LEVEL = {
    "model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream", "thinking",
    "metadata", "stop_sequences", "temperature", "top_p", "top_k", "service_tier",
    "output_config", "context_management", "container", "mcp_servers",
}  # fmt: skip
BLOCK_FIELDS: dict[str, set[str]] = {
    "text": {"type", "text", "cache_control", "citations"},
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "title", "context", "citations", "cache_control"},
    "search_result": {"type", "source", "title", "content", "citations", "cache_control"},
    "tool_use": {"type", "id", "name", "input", "cache_control"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
    "server_tool_use": {"type", "id", "name", "input", "cache_control"},
    "web_search_tool_result": {"type", "tool_use_id", "content", "cache_control"},
    "web_fetch_tool_result": {"type", "tool_use_id", "content", "cache_control"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
}
RESULT_PARTS = {"text", "image", "document", "search_result"}
CUSTOM_TOOL = {"name", "description", "input_schema", "cache_control", "type", "strict",
               "defer_loading", "input_examples"}  # fmt: skip


def _cache_mark(block: dict[str, Any], path: str, marks: list[tuple[str, str]]) -> None:
    mark = block.get("cache_control")
    if mark is None:
        return
    mark = as_dict(mark, f"{path}.cache_control")
    extra(mark, {"type", "ttl"}, f"{path}.cache_control")
    if mark.get("type") != "ephemeral":
        raise fail(f"{path}.cache_control.type: Input should be 'ephemeral'")
    ttl = mark.get("ttl", "5m")
    if ttl not in ("5m", "1h"):
        raise fail(f"{path}.cache_control.ttl: Input should be '5m' or '1h'")
    marks.append((path, ttl))


def check_cache_marks(marks: list[tuple[str, str]]) -> None:
    if len(marks) > MAX_CACHE_MARKS:
        raise fail(
            f"A maximum of {MAX_CACHE_MARKS} blocks with cache_control may be provided. "
            f"Found {len(marks)}."
        )
    seen_5m = False
    for _, ttl in marks:
        if ttl == "1h" and seen_5m:
            raise fail(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
                "block. Note that blocks are processed in the following order: `tools`, "
                "`system`, `messages`."
            )
        seen_5m = seen_5m or ttl == "5m"


def check_tools(tools: Any, marks: list[tuple[str, str]]) -> None:
    if tools is None:
        return
    names: set[str] = set()
    for i, raw in enumerate(as_list(tools, "tools")):
        tool = as_dict(raw, f"tools.{i}")
        path = f"tools.{i}.custom"
        kind = tool.get("type")
        if kind in (None, "custom"):
            extra(tool, CUSTOM_TOOL, path)
            if "input_schema" not in tool:
                raise fail(f"{path}.input_schema: Field required")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise fail(f"{path}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if name in names:
            raise fail("tools: Tool names must be unique.")
        names.add(name)
        _cache_mark(tool, f"tools.{i}", marks)


def _check_text(text: Any, path: str) -> None:
    if not isinstance(text, str):
        raise fail(f"{path}.text: Input should be a valid string")
    if not text:
        raise fail(f"{path}.text: text content blocks must be non-empty")
    if not text.strip():
        raise fail("messages: text content blocks must contain non-whitespace text")


def check_system(system: Any, marks: list[tuple[str, str]]) -> None:
    if system is None or isinstance(system, str):
        return
    for i, raw in enumerate(as_list(system, "system")):
        block = as_dict(raw, f"system.{i}")
        if block.get("type") != "text":
            raise fail(f"system.{i}.type: Input should be 'text'")
        extra(block, BLOCK_FIELDS["text"], f"system.{i}")
        text = block.get("text")
        if not isinstance(text, str) or not text:
            raise fail(f"system.{i}.text: text content blocks must be non-empty")
        _cache_mark(block, f"system.{i}", marks)


def check_message(
    raw: Any,
    i: int,
    count: int,
    marks: list[tuple[str, str]],
    system_messages: bool,
    per_message_effort: bool = False,
) -> dict[str, Any] | None:
    """Message ``i`` of ``count`` on its own: its blocks as checked (with ``index``), or None
    for a system message (taken when the model takes them; with ``output_config`` only
    under the per-turn-control beta)."""
    message = as_dict(raw, f"messages.{i}")
    role = message.get("role")
    if role == "system" and system_messages:
        _check_system_message(message, f"messages.{i}", marks, per_message_effort)
        return None
    extra(message, {"role", "content"}, f"messages.{i}")
    if role not in ("user", "assistant"):
        raise fail(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    content = message.get("content")
    if isinstance(content, str):
        if not content and i != count - 1:
            raise fail(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
    else:
        blocks = [
            _check_block(b, f"messages.{i}.content.{k}", role, marks)
            for k, b in enumerate(as_list(content, f"messages.{i}.content"))
        ]
        if not blocks and not (role == "assistant" and i == count - 1):
            raise fail(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
    return {"role": role, "content": blocks, "index": i}


def _check_system_message(
    message: dict[str, Any], path: str, marks: list[tuple[str, str]], effort: bool
) -> None:
    """A mid-conversation system message: instructions at a point of the conversation, text
    blocks only; a per-message ``output_config`` only under the per-turn-control beta."""
    extra(message, {"role", "content", "output_config"} if effort else {"role", "content"}, path)
    content = message.get("content")
    if isinstance(content, str):
        _check_text(content, path)
        return
    blocks = as_list(content, f"{path}.content")
    if not blocks:
        raise fail(f"{path}: all messages must have non-empty content")
    for k, raw in enumerate(blocks):
        block = as_dict(raw, f"{path}.content.{k}")
        if block.get("type") != "text":
            raise fail(f"{path}.content.{k}.type: Input should be 'text'")
        extra(block, BLOCK_FIELDS["text"], f"{path}.content.{k}")
        _check_text(block.get("text"), f"{path}.content.{k}")
        _cache_mark(block, f"{path}.content.{k}", marks)


def _check_block(
    raw: Any, path: str, role: str, marks: list[tuple[str, str]], *, in_result: bool = False
) -> dict[str, Any]:
    block = as_dict(raw, path)
    kind = block.get("type")
    allowed = RESULT_PARTS if in_result else set(BLOCK_FIELDS)
    if kind not in allowed:
        tags = ", ".join(f"'{t}'" for t in sorted(allowed))
        raise fail(
            f"{path}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {tags}"
        )
    extra(block, BLOCK_FIELDS[str(kind)], path)
    if kind == "text":
        _check_text(block.get("text"), path)
    elif kind in ("tool_use", "server_tool_use"):
        use_id = block.get("id")
        if not isinstance(use_id, str) or not TOOL_ID.match(use_id):
            raise fail(f"{path}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        as_dict(block.get("input"), f"{path}.input")
        if role != "assistant":
            raise fail(f"{path}: `tool_use` blocks may only appear in assistant messages")
    elif kind == "tool_result":
        if role != "user":
            raise fail(f"{path}: `tool_result` blocks may only appear in user messages")
        content = block.get("content")
        if isinstance(content, list):
            for k, part in enumerate(cast("list[Any]", content)):
                _check_block(part, f"{path}.content.{k}", role, marks, in_result=True)
    elif kind == "thinking" and not isinstance(block.get("signature"), str):
        raise fail(f"{path}.signature: Field required")
    _cache_mark(block, path, marks)
    return block


def merge(
    messages: list[dict[str, Any]], merged: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Consecutive same-role messages as one (the API merges them first), appended to
    ``merged``."""
    merged = [] if merged is None else merged
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {**merged[-1], "content": [*merged[-1]["content"], *message["content"]]}
        else:
            merged.append(dict(message))
    return merged


def check_pairing(
    merged: list[dict[str, Any]], start: int = 0, seen_ids: set[str] | None = None
) -> None:
    """Tool use and result pairing from merged message ``start`` on; ``seen_ids``: the
    tool_use ids of the messages before it."""
    seen_ids = set() if seen_ids is None else seen_ids
    for i in range(start, len(merged)):
        message = merged[i]
        where = f"messages.{message['index']}"
        if message["role"] == "assistant":
            ids: list[str] = []
            for k, use in uses(message):
                if use["id"] in seen_ids:
                    raise fail(f"{where}.content.{k}: `tool_use` ids must be unique")
                seen_ids.add(use["id"])
                ids.append(use["id"])
            if not ids or i == len(merged) - 1:
                continue
            following = merged[i + 1]["content"]
            leading = 0
            while leading < len(following) and following[leading].get("type") == "tool_result":
                leading += 1
            answered = {b.get("tool_use_id") for b in following[:leading]}
            missing = [u for u in ids if u not in answered]
            if leading < len(ids) and not missing:
                missing = ids
            if missing:
                if leading < len(ids):
                    raise fail(
                        f"messages.{merged[i + 1]['index']}: Did not find {len(ids)} "
                        "`tool_result` block(s) at the beginning of this message. Messages "
                        "following `tool_use` blocks must begin with a matching number of "
                        "`tool_result` blocks."
                    )
                raise fail(
                    f"{where}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must "
                    "have a corresponding `tool_result` block in the next message."
                )
        else:
            previous = merged[i - 1] if i > 0 else None
            offered = {u["id"] for _, u in uses(previous)} if previous else set[str]()
            results: set[str] = set()
            for k, block in enumerate(message["content"]):
                if block.get("type") != "tool_result":
                    continue
                use_id = block.get("tool_use_id")
                if use_id not in offered:
                    raise fail(
                        f"{where}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {use_id}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message."
                    )
                if use_id in results:
                    raise fail(
                        f"{where}: each tool_use must have a single result. Found multiple "
                        f"`tool_result` blocks with id: {use_id}"
                    )
                results.add(str(use_id))
