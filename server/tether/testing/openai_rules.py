"""What OpenAI-compatible servers refuse, and how they say it, for the fake server.

Two flavours, as the servers send them:

* ``vllm``: errors are ``{"error": {"message", "type": "BadRequestError", "param": null,
  "code": 400}}``; a prompt that does not fit gets "This model's maximum context length is
  M tokens. However, you requested N tokens (P in the messages, C in the completion). Please
  reduce the length of the messages or completion." (prompt plus ``max_tokens`` must fit;
  without ``max_tokens`` the prompt alone); ``GET /v1/models`` reports ``max_model_len``.
* ``ollama``: errors are ``{"error": {"message", "type": "invalid_request_error", "param":
  null, "code": null}}``; a prompt over the loaded context (``num_ctx``) is refused with "the
  input length exceeds the context length"; ``/v1/models`` has no length and
  ``POST /api/show`` reports ``model_info["<arch>.context_length"]`` and ``num_ctx`` in
  ``parameters``.

Both check the tool-call pairing every OpenAI-compatible chat template relies on: an
assistant message with ``tool_calls`` is followed by one ``tool`` message per call id, and a
``tool`` message answers a call of the assistant message before it.

**Token rule**: prompt tokens = ``ceil(len(utf8(json.dumps({"messages", "tools"},
ensure_ascii=False, separators=(",", ":"), sort_keys=True))) / 4)``, the same rule as the
fake Messages API; ``usage.prompt_tokens`` reports it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal, cast

Flavor = Literal["vllm", "ollama"]


@dataclass(frozen=True)
class ServerError:
    status: int
    message: str
    flavor: Flavor

    def body(self) -> dict[str, Any]:
        if self.flavor == "vllm":
            kind = "BadRequestError" if self.status == 400 else "NotFoundError"
            return {
                "error": {"message": self.message, "type": kind, "param": None, "code": self.status}
            }
        kind = "invalid_request_error" if self.status < 500 else "api_error"
        return {"error": {"message": self.message, "type": kind, "param": None, "code": None}}


def count_prompt_tokens(body: dict[str, Any]) -> int:
    payload = {"messages": body.get("messages"), "tools": body.get("tools")}
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return math.ceil(len(raw.encode("utf-8", "surrogatepass")) / 4)


def check_chat_request(
    body: dict[str, Any], *, window: int, flavor: Flavor, served_model: str | None
) -> ServerError | None:
    def fail(message: str, status: int = 400) -> ServerError:
        return ServerError(status, message, flavor)

    model = body.get("model")
    if served_model is not None and model != served_model:
        if flavor == "vllm":
            return fail(f"The model `{model}` does not exist.", 404)
        return fail(f'model "{model}" not found, try pulling it first', 404)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return fail("messages: at least one message is required")
    problem = _pairing(cast("list[Any]", messages))
    if problem is not None:
        return fail(problem)
    prompt = count_prompt_tokens(body)
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    if flavor == "ollama":
        if prompt > window:
            return fail("the input length exceeds the context length")
        return None
    if isinstance(max_tokens, int):
        if prompt + max_tokens > window:
            return fail(
                f"This model's maximum context length is {window} tokens. However, you "
                f"requested {prompt + max_tokens} tokens ({prompt} in the messages, "
                f"{max_tokens} in the completion). Please reduce the length of the messages "
                "or completion."
            )
    elif prompt >= window:
        return fail(
            f"This model's maximum context length is {window} tokens. However, your request "
            f"has {prompt} input tokens. Please reduce the length of the input messages."
        )
    return None


def _pairing(messages: list[Any]) -> str | None:
    pending: list[str] = []
    offered: set[str] = set()
    for i, raw in enumerate(messages):
        if not isinstance(raw, dict):
            return f"messages[{i}]: Input should be a valid dictionary"
        message = cast("dict[str, Any]", raw)
        role = message.get("role")
        if role not in ("system", "user", "assistant", "tool", "developer"):
            return f"messages[{i}].role: Input should be 'system', 'user', 'assistant' or 'tool'"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in offered:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            if call_id in pending:
                pending.remove(str(call_id))
            continue
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)}"
            )
        offered = set()
        if role == "assistant":
            calls = cast("list[dict[str, Any]]", message.get("tool_calls") or [])
            pending = [str(c.get("id")) for c in calls]
            offered = set(pending)
    if pending:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(pending)}"
        )
    return None
