"""What the real Messages API refuses, checked on every request the fake API receives.

``check_request`` returns the first violation as an ``ApiError`` carrying the real status,
error type and message wording (``{"type": "error", "error": {"type":
"invalid_request_error", "message": ...}}``, HTTP 400), or None. The rules:

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
* the context window: the request's input tokens, counted by ``count_input_tokens``,
  must not exceed the window: ``prompt is too long: N tokens > M maximum``.

**Token rule** (documented in docs/testing.md too): input tokens =
``ceil(len(utf8(json.dumps({"system", "tools", "messages"}, ensure_ascii=False,
separators=(",", ":"), sort_keys=True))) / 4)`` — the JSON of the three request fields as
sent. The fake reports ``usage.input_tokens`` by the same rule (less scripted cache reads).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from tether.providers.models import MIN_THINKING_BUDGET, ModelLimits

_KEY = b"tether-fake-anthropic-signing-key"
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_CACHE_MARKS = 4
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

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


@dataclass(frozen=True)
class ApiError:
    status: int
    type: str
    message: str

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


def invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


class Reject(Exception):
    def __init__(self, error: ApiError):
        super().__init__(error.message)
        self.error = error


def _fail(message: str) -> Reject:
    return Reject(invalid(message))


# -- signatures -----------------------------------------------------------------------


def sign(text: str) -> str:
    digest = hmac.new(_KEY, text.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def redacted_data(seed: str) -> str:
    """Opaque ``redacted_thinking`` data: a nonce and its signature."""
    nonce = base64.b64encode(hashlib.sha256(seed.encode()).digest()[:12]).decode()
    return f"{nonce}.{sign(nonce)}"


def _redacted_ok(data: str) -> bool:
    nonce, _, signature = data.partition(".")
    return bool(nonce) and hmac.compare_digest(sign(nonce), signature)


# -- tokens ---------------------------------------------------------------------------


def count_input_tokens(body: dict[str, Any]) -> int:
    """The fake's token rule: a quarter of the UTF-8 bytes of system+tools+messages."""
    payload = {
        "system": body.get("system"),
        "tools": body.get("tools"),
        "messages": body.get("messages"),
    }
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return math.ceil(len(raw.encode("utf-8", "surrogatepass")) / 4)


# -- the check ------------------------------------------------------------------------


@dataclass
class RequestContext:
    """What the fake knows beyond the body: the model's limits and the responses it gave."""

    limits: ModelLimits
    window: int
    thought_before_tools: set[str] = field(default_factory=lambda: set[str]())
    """tool_use ids of responses that began with a thinking block."""


def check_request(body: dict[str, Any], ctx: RequestContext) -> ApiError | None:
    try:
        _check(body, ctx)
    except Reject as r:
        return r.error
    return None


def _check(body: dict[str, Any], ctx: RequestContext) -> None:
    _extra(body, TOP_LEVEL, "")
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            raise _fail(f"{key}: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise _fail("max_tokens: Input should be greater than or equal to 1")
    if max_tokens > ctx.limits.max_output:
        raise _fail(
            f"max_tokens: {max_tokens} > {ctx.limits.max_output}, which is the maximum "
            f"allowed number of output tokens for {body['model']}"
        )
    marks: list[tuple[str, str]] = []
    _check_tools(body.get("tools"), marks)
    _check_system(body.get("system"), marks)
    messages = _check_messages(body["messages"], marks)
    _check_cache_marks(marks)
    thinking = _check_thinking_config(body.get("thinking"), max_tokens, ctx)
    merged = _merge(messages)
    _check_pairing(merged)
    _check_thinking_blocks(merged, thinking, ctx)
    tokens = count_input_tokens(body)
    if tokens > ctx.window:
        raise _fail(f"prompt is too long: {tokens} tokens > {ctx.window} maximum")


def _extra(obj: dict[str, Any], allowed: set[str], path: str) -> None:
    for key in obj:
        if key not in allowed:
            where = f"{path}.{key}" if path else key
            raise _fail(f"{where}: Extra inputs are not permitted")


def _as_dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"{path}: Input should be a valid dictionary or object")
    return cast("dict[str, Any]", value)


def _as_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(f"{path}: Input should be a valid list")
    return cast("list[Any]", value)


def _cache_mark(block: dict[str, Any], path: str, marks: list[tuple[str, str]]) -> None:
    mark = block.get("cache_control")
    if mark is None:
        return
    mark = _as_dict(mark, f"{path}.cache_control")
    _extra(mark, {"type", "ttl"}, f"{path}.cache_control")
    if mark.get("type") != "ephemeral":
        raise _fail(f"{path}.cache_control.type: Input should be 'ephemeral'")
    ttl = mark.get("ttl", "5m")
    if ttl not in ("5m", "1h"):
        raise _fail(f"{path}.cache_control.ttl: Input should be '5m' or '1h'")
    marks.append((path, ttl))


def _check_cache_marks(marks: list[tuple[str, str]]) -> None:
    if len(marks) > MAX_CACHE_MARKS:
        raise _fail(
            f"A maximum of {MAX_CACHE_MARKS} blocks with cache_control may be provided. "
            f"Found {len(marks)}."
        )
    seen_5m = False
    for _, ttl in marks:
        if ttl == "1h" and seen_5m:
            raise _fail(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
                "block. Note that blocks are processed in the following order: `tools`, "
                "`system`, `messages`."
            )
        seen_5m = seen_5m or ttl == "5m"


def _check_tools(tools: Any, marks: list[tuple[str, str]]) -> None:
    if tools is None:
        return
    names: set[str] = set()
    for i, raw in enumerate(_as_list(tools, "tools")):
        tool = _as_dict(raw, f"tools.{i}")
        path = f"tools.{i}.custom"
        kind = tool.get("type")
        if kind in (None, "custom"):
            _extra(tool, CUSTOM_TOOL, path)
            if "input_schema" not in tool:
                raise _fail(f"{path}.input_schema: Field required")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise _fail(f"{path}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if name in names:
            raise _fail("tools: Tool names must be unique.")
        names.add(name)
        _cache_mark(tool, f"tools.{i}", marks)


def _check_text(text: Any, path: str) -> None:
    if not isinstance(text, str):
        raise _fail(f"{path}.text: Input should be a valid string")
    if not text:
        raise _fail(f"{path}.text: text content blocks must be non-empty")
    if not text.strip():
        raise _fail("messages: text content blocks must contain non-whitespace text")


def _check_system(system: Any, marks: list[tuple[str, str]]) -> None:
    if system is None or isinstance(system, str):
        return
    for i, raw in enumerate(_as_list(system, "system")):
        block = _as_dict(raw, f"system.{i}")
        if block.get("type") != "text":
            raise _fail(f"system.{i}.type: Input should be 'text'")
        _extra(block, BLOCK_FIELDS["text"], f"system.{i}")
        text = block.get("text")
        if not isinstance(text, str) or not text:
            raise _fail(f"system.{i}.text: text content blocks must be non-empty")
        _cache_mark(block, f"system.{i}", marks)


def _check_messages(raw_messages: Any, marks: list[tuple[str, str]]) -> list[dict[str, Any]]:
    messages = _as_list(raw_messages, "messages")
    if not messages:
        raise _fail("messages: at least one message is required")
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(messages):
        message = _as_dict(raw, f"messages.{i}")
        _extra(message, {"role", "content"}, f"messages.{i}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise _fail(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        if isinstance(content, str):
            if not content and i != len(messages) - 1:
                raise _fail(
                    f"messages.{i}: all messages must have non-empty content except for the "
                    "optional final assistant message"
                )
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
        else:
            blocks = [
                _check_block(b, f"messages.{i}.content.{k}", role, marks)
                for k, b in enumerate(_as_list(content, f"messages.{i}.content"))
            ]
            if not blocks and not (role == "assistant" and i == len(messages) - 1):
                raise _fail(
                    f"messages.{i}: all messages must have non-empty content except for the "
                    "optional final assistant message"
                )
        out.append({"role": role, "content": blocks, "index": i})
    return out


def _check_block(
    raw: Any, path: str, role: str, marks: list[tuple[str, str]], *, in_result: bool = False
) -> dict[str, Any]:
    block = _as_dict(raw, path)
    kind = block.get("type")
    allowed = RESULT_PARTS if in_result else set(BLOCK_FIELDS)
    if kind not in allowed:
        tags = ", ".join(f"'{t}'" for t in sorted(allowed))
        raise _fail(
            f"{path}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {tags}"
        )
    _extra(block, BLOCK_FIELDS[str(kind)], path)
    if kind == "text":
        _check_text(block.get("text"), path)
    elif kind in ("tool_use", "server_tool_use"):
        use_id = block.get("id")
        if not isinstance(use_id, str) or not TOOL_ID.match(use_id):
            raise _fail(f"{path}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        _as_dict(block.get("input"), f"{path}.input")
        if role != "assistant":
            raise _fail(f"{path}: `tool_use` blocks may only appear in assistant messages")
    elif kind == "tool_result":
        if role != "user":
            raise _fail(f"{path}: `tool_result` blocks may only appear in user messages")
        content = block.get("content")
        if isinstance(content, list):
            for k, part in enumerate(cast("list[Any]", content)):
                _check_block(part, f"{path}.content.{k}", role, marks, in_result=True)
    elif kind == "thinking" and not isinstance(block.get("signature"), str):
        raise _fail(f"{path}.signature: Field required")
    _cache_mark(block, path, marks)
    return block


def _merge(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {**merged[-1], "content": [*merged[-1]["content"], *message["content"]]}
        else:
            merged.append(dict(message))
    return merged


def _uses(message: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    for k, block in enumerate(message["content"]):
        if block.get("type") == "tool_use":
            yield k, block


def _check_pairing(merged: list[dict[str, Any]]) -> None:
    seen_ids: set[str] = set()
    for i, message in enumerate(merged):
        where = f"messages.{message['index']}"
        if message["role"] == "assistant":
            ids: list[str] = []
            for k, use in _uses(message):
                if use["id"] in seen_ids:
                    raise _fail(f"{where}.content.{k}: `tool_use` ids must be unique")
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
                    raise _fail(
                        f"messages.{merged[i + 1]['index']}: Did not find {len(ids)} "
                        "`tool_result` block(s) at the beginning of this message. Messages "
                        "following `tool_use` blocks must begin with a matching number of "
                        "`tool_result` blocks."
                    )
                raise _fail(
                    f"{where}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must "
                    "have a corresponding `tool_result` block in the next message."
                )
        else:
            previous = merged[i - 1] if i > 0 else None
            offered = {u["id"] for _, u in _uses(previous)} if previous else set[str]()
            results: set[str] = set()
            for k, block in enumerate(message["content"]):
                if block.get("type") != "tool_result":
                    continue
                use_id = block.get("tool_use_id")
                if use_id not in offered:
                    raise _fail(
                        f"{where}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {use_id}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message."
                    )
                if use_id in results:
                    raise _fail(
                        f"{where}: each tool_use must have a single result. Found multiple "
                        f"`tool_result` blocks with id: {use_id}"
                    )
                results.add(str(use_id))


def _check_thinking_config(raw: Any, max_tokens: int, ctx: RequestContext) -> str:
    """The thinking type in force: ``enabled``, ``adaptive`` or ``disabled``."""
    if raw is None:
        return "disabled"
    config = _as_dict(raw, "thinking")
    kind = config.get("type")
    if kind == "disabled":
        _extra(config, {"type"}, "thinking.disabled")
        return "disabled"
    if kind == "adaptive":
        _extra(config, {"type", "display"}, "thinking.adaptive")
        if ctx.limits.thinking != "adaptive":
            raise _fail("thinking.type: 'adaptive' is not supported on this model")
        return "adaptive"
    if kind != "enabled":
        raise _fail(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'adaptive', 'disabled', 'enabled'"
        )
    _extra(config, {"type", "budget_tokens", "display"}, "thinking.enabled")
    if ctx.limits.thinking == "none":
        raise _fail("thinking: this model does not support extended thinking")
    budget = config.get("budget_tokens")
    if not isinstance(budget, int):
        raise _fail("thinking.enabled.budget_tokens: Field required")
    if budget < MIN_THINKING_BUDGET:
        raise _fail(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to "
            f"{MIN_THINKING_BUDGET}"
        )
    if budget >= max_tokens:
        raise _fail(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            f"documentation at {THINKING_DOCS}#max-tokens-and-context-window-size"
        )
    return "enabled"


def _is_thinking(block: dict[str, Any]) -> bool:
    return block.get("type") in ("thinking", "redacted_thinking")


def _check_thinking_blocks(
    merged: list[dict[str, Any]], thinking: str, ctx: RequestContext
) -> None:
    assistants = [i for i, m in enumerate(merged) if m["role"] == "assistant"]
    latest = assistants[-1] if assistants else None
    for i in assistants:
        message = merged[i]
        where = f"messages.{message['index']}"
        content: list[dict[str, Any]] = message["content"]
        if any(_is_thinking(b) for b in content) and not _is_thinking(content[0]):
            raise _fail(
                f"{where}.content.0: If an assistant message contains any thinking blocks, the "
                f"first block must be `thinking` or `redacted_thinking`. Found "
                f"`{content[0].get('type')}`."
            )
        for k, block in enumerate(content):
            if block.get("type") == "thinking":
                ok = hmac.compare_digest(sign(str(block.get("thinking"))), str(block["signature"]))
            elif block.get("type") == "redacted_thinking":
                ok = _redacted_ok(str(block.get("data", "")))
            else:
                continue
            if ok:
                continue
            if i == latest:
                raise _fail(
                    f"{where}.content.{k}: `thinking` or `redacted_thinking` blocks in the "
                    "latest assistant message cannot be modified. These blocks must remain as "
                    "they were in the original response."
                )
            raise _fail(f"{where}.content.{k}: Invalid `signature` in `thinking` block")
    if not merged:
        return
    last = merged[-1]
    if last["role"] == "assistant":
        content = last["content"]
        where = f"messages.{last['index']}"
        if thinking == "disabled" and any(_is_thinking(b) for b in content):
            k = next(k for k, b in enumerate(content) if _is_thinking(b))
            raise _fail(
                f"{where}.content.{k}: When thinking is disabled, an `assistant` message in the "
                "final position cannot contain `thinking`. To use thinking blocks, enable "
                "`thinking` in your request."
            )
        if content and _is_thinking(content[-1]):
            raise _fail(f"{where}: The final block in an assistant message cannot be `thinking`.")
        return
    if thinking == "disabled" or len(merged) < 2:
        return
    in_loop = bool(last["content"]) and last["content"][0].get("type") == "tool_result"
    assistant = merged[-2]
    if not in_loop or assistant["role"] != "assistant":
        return
    content = assistant["content"]
    ids = {u["id"] for _, u in _uses(assistant)}
    must = thinking == "enabled" or bool(ids & ctx.thought_before_tools)
    if must and not _is_thinking(content[0]):
        raise _fail(
            f"messages.{assistant['index']}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{content[0].get('type')}`. When `thinking` is "
            "enabled, a final `assistant` message must start with a thinking block "
            "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
            "recommend you include thinking blocks from previous turns. To avoid this "
            f"requirement, disable `thinking`. Please consult our documentation at {THINKING_DOCS}"
        )
