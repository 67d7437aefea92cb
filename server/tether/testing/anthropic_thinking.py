"""The fake Messages API's thinking rules and signatures (see ``anthropic_rules``).

Signatures are HMAC-SHA256 under a fixed key: valid across fake instances, like the real
ones across requests, and impossible for the client to forge.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from tether.providers.models import MIN_THINKING_BUDGET
from tether.testing.anthropic_wire import RequestContext, as_dict, extra, fail, uses

_KEY = b"tether-fake-anthropic-signing-key"
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


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


def check_thinking_config(raw: Any, max_tokens: int, ctx: RequestContext) -> str:
    """The thinking type in force: ``enabled``, ``adaptive`` or ``disabled``."""
    if raw is None:
        return "disabled"
    config = as_dict(raw, "thinking")
    kind = config.get("type")
    if kind == "disabled":
        extra(config, {"type"}, "thinking.disabled")
        return "disabled"
    if kind == "adaptive":
        extra(config, {"type", "display"}, "thinking.adaptive")
        if ctx.limits.thinking != "adaptive":
            raise fail("thinking.type: 'adaptive' is not supported on this model")
        return "adaptive"
    if kind != "enabled":
        raise fail(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'adaptive', 'disabled', 'enabled'"
        )
    extra(config, {"type", "budget_tokens", "display"}, "thinking.enabled")
    if ctx.limits.thinking == "none":
        raise fail("thinking: this model does not support extended thinking")
    budget = config.get("budget_tokens")
    if not isinstance(budget, int):
        raise fail("thinking.enabled.budget_tokens: Field required")
    if budget < MIN_THINKING_BUDGET:
        raise fail(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to "
            f"{MIN_THINKING_BUDGET}"
        )
    if budget >= max_tokens:
        raise fail(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            f"documentation at {THINKING_DOCS}#max-tokens-and-context-window-size"
        )
    return "enabled"


def is_thinking(block: dict[str, Any]) -> bool:
    return block.get("type") in ("thinking", "redacted_thinking")


def check_thinking_blocks(
    merged: list[dict[str, Any]], thinking: str, ctx: RequestContext, start: int = 0
) -> None:
    """``start``: merged messages before it passed these checks in an earlier request (a
    block that passed then passes now: only its error's wording depends on its position)."""
    latest = next(
        (i for i in range(len(merged) - 1, -1, -1) if merged[i]["role"] == "assistant"), None
    )
    for i in range(start, len(merged)):
        message = merged[i]
        if message["role"] != "assistant":
            continue
        where = f"messages.{message['index']}"
        content: list[dict[str, Any]] = message["content"]
        if any(is_thinking(b) for b in content) and not is_thinking(content[0]):
            raise fail(
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
                raise fail(
                    f"{where}.content.{k}: `thinking` or `redacted_thinking` blocks in the "
                    "latest assistant message cannot be modified. These blocks must remain as "
                    "they were in the original response."
                )
            raise fail(f"{where}.content.{k}: Invalid `signature` in `thinking` block")
    if not merged:
        return
    last = merged[-1]
    if last["role"] == "assistant":
        content = last["content"]
        where = f"messages.{last['index']}"
        if thinking == "disabled" and any(is_thinking(b) for b in content):
            k = next(k for k, b in enumerate(content) if is_thinking(b))
            raise fail(
                f"{where}.content.{k}: When thinking is disabled, an `assistant` message in the "
                "final position cannot contain `thinking`. To use thinking blocks, enable "
                "`thinking` in your request."
            )
        if content and is_thinking(content[-1]):
            raise fail(f"{where}: The final block in an assistant message cannot be `thinking`.")
        return
    if thinking == "disabled" or len(merged) < 2:
        return
    in_loop = bool(last["content"]) and last["content"][0].get("type") == "tool_result"
    assistant = merged[-2]
    if not in_loop or assistant["role"] != "assistant":
        return
    content = assistant["content"]
    ids = {u["id"] for _, u in uses(assistant)}
    must = thinking == "enabled" or bool(ids & ctx.thought_before_tools)
    if must and not is_thinking(content[0]):
        raise fail(
            f"messages.{assistant['index']}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{content[0].get('type')}`. When `thinking` is "
            "enabled, a final `assistant` message must start with a thinking block "
            "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
            "recommend you include thinking blocks from previous turns. To avoid this "
            f"requirement, disable `thinking`. Please consult our documentation at {THINKING_DOCS}"
        )
