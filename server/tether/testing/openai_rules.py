"""What OpenAI-compatible servers refuse, and how they say it, for the fake server.

Four flavours, each rule with its evidence:

* ``vllm``: errors are ``{"error": {"message", "type": "BadRequestError", "param": null,
  "code": 400}}``; a prompt that does not fit gets "This model's maximum context length is
  M tokens. However, you requested N tokens (P in the messages, C in the completion). Please
  reduce the length of the messages or completion." (prompt plus ``max_tokens`` must fit;
  without ``max_tokens``, "... However, your request has N input tokens. Please reduce the
  length of the input messages.") [vLLM's wording, as quoted by client projects' overflow
  detectors]; ``GET /v1/models`` lists ``max_model_len`` on each card [vLLM's ``ModelCard``].
* ``llamacpp`` (llama.cpp's ``llama-server``): a prompt of ``n_ctx`` tokens or more gets 400
  ``{"error": {"code": 400, "message": "request (N tokens) exceeds the available context
  size (M tokens), try increasing it", "type": "exceed_context_size_error",
  "n_prompt_tokens": N, "n_ctx": M}}`` [``tools/server/server-context.cpp``: ``n_tokens() >=
  n_ctx``; ``server_task_result_error::to_json`` adds the two counts]; ``GET /props``
  reports ``default_generation_settings.n_ctx`` [the server's README].
* ``litellm`` (the LiteLLM proxy): the upstream's refusal comes back wrapped, ``{"error":
  {"message": "litellm.ContextWindowExceededError: litellm.BadRequestError: ... <the
  upstream's words>", "type": "None", "param": "None", "code": "400"}}`` (captured answers
  quoted in zed-industries/zed#42715 and client projects); ``GET /model/info`` lists each
  deployment's ``model_info.max_input_tokens`` [docs.litellm.ai/docs/proxy/model_management].
* ``ollama``: through ``/v1`` a prompt over the loaded context is **not refused**: Ollama
  cuts it silently (``truncate`` and ``shift`` default to true, and the OpenAI layer cannot
  set them or ``num_ctx``: ``openai/openai.go`` ``ChatCompletionRequest``;
  docs/api/openai-compatibility.mdx "Setting the context size"). The fake answers such a
  request as Ollama does, with ``prompt_tokens`` of what it kept, and records it as a
  problem (a test fails on it). ``POST /api/show`` gives ``parameters`` (``num_ctx`` only
  when the model's Modelfile sets it) and ``model_info["<arch>.context_length"]``;
  ``GET /api/ps`` lists loaded models with their ``context_length``; ``POST /api/generate``
  without a prompt loads a model [docs/api.md, docs/openapi.yaml].

Three more refuse a prompt over the window in their own words and shapes (they report the
window nowhere the fake serves):

* ``lmstudio`` (LM Studio's server): every error is ``{"error": "<text>"}``, a string; over
  the window, 400 ``Trying to keep the first N tokens when context the overflows. However,
  the model is loaded with context length of only M tokens, which is not enough. Try to
  load the model with a larger context length, or provide a shorter input``
  [lmstudio-ai/lmstudio-bug-tracker#237 (a 400 with these words), #546].
* ``tgi`` (Hugging Face text-generation-inference): 422 ``{"error": "Input validation
  error: `inputs` tokens + `max_new_tokens` must be <= M. Given: N `inputs` tokens and K
  `max_new_tokens`", "error_type": "validation"}``; without ``max_tokens``, ``Input
  validation error: `inputs` must have less than M tokens. Given: N``
  [opea-project/GenAIInfra#487 (the body), huggingface/llm-vscode#94, TGI's
  ``router/src/validation.rs``].
* ``gemini`` (Gemini's OpenAI-compatible endpoint): a list-shaped body, ``[{"error":
  {"code": 400, "message": "The input token count (N) exceeds the maximum number of tokens
  allowed (M).", "status": "INVALID_ARGUMENT"}}]`` [google-gemini/gemini-cli#6678,
  #12098].

All check the tool-call pairing every OpenAI-compatible chat template relies on: an
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

from tether.testing.image_tokens import without_images

Flavor = Literal["vllm", "ollama", "llamacpp", "litellm", "lmstudio", "tgi", "gemini"]


@dataclass(frozen=True)
class ServerError:
    status: int
    message: str
    flavor: Flavor
    fields: tuple[tuple[str, Any], ...] = ()
    """More members of the error object (llama.cpp's ``type``, ``n_prompt_tokens``...)."""

    def body(self) -> Any:
        if self.flavor == "lmstudio":
            return {"error": self.message}
        if self.flavor == "tgi":
            return {"error": self.message, "error_type": "validation"}
        if self.flavor == "gemini":
            status = "INVALID_ARGUMENT" if self.status == 400 else "NOT_FOUND"
            return [{"error": {"code": self.status, "message": self.message, "status": status}}]
        if self.flavor == "vllm":
            kind = "BadRequestError" if self.status == 400 else "NotFoundError"
            return {
                "error": {"message": self.message, "type": kind, "param": None, "code": self.status}
            }
        if self.flavor == "llamacpp":
            error = {"code": self.status, "message": self.message, "type": "invalid_request_error"}
            return {"error": {**error, **dict(self.fields)}}
        if self.flavor == "litellm":
            return {
                "error": {
                    "message": self.message,
                    "type": "None",
                    "param": "None",
                    "code": str(self.status),
                }
            }
        kind = "invalid_request_error" if self.status < 500 else "api_error"
        return {"error": {"message": self.message, "type": kind, "param": None, "code": None}}


def count_prompt_tokens(body: dict[str, Any]) -> int:
    payload = {"messages": body.get("messages"), "tools": body.get("tools")}
    payload, images = without_images(payload, "openai")
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return math.ceil(len(raw.encode("utf-8", "surrogatepass")) / 4) + images


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
        return None  # a prompt over the window is cut, not refused (``truncated_prompt``)
    counts_output = flavor in ("vllm", "tgi") and isinstance(max_tokens, int)
    limit = window - max_tokens if counts_output and isinstance(max_tokens, int) else window
    if prompt > limit or (flavor in ("llamacpp", "vllm", "tgi") and prompt >= window):
        return overflow_error(flavor, prompt, window, max_tokens)
    return None


def overflow_error(
    flavor: Flavor, prompt: int, window: int, max_tokens: object = None
) -> ServerError:
    """How the server refuses a prompt of ``prompt`` tokens over its ``window``."""
    if flavor == "llamacpp":
        message = (
            f"request ({prompt} tokens) exceeds the available context size ({window} tokens), "
            "try increasing it"
        )
        fields = (
            ("type", "exceed_context_size_error"),
            ("n_prompt_tokens", prompt),
            ("n_ctx", window),
        )
        return ServerError(400, message, flavor, fields)
    if flavor == "litellm":
        message = (
            "litellm.ContextWindowExceededError: litellm.BadRequestError: "
            "ContextWindowExceededError: OpenAIException - This model's maximum context "
            f"length is {window} tokens. However, your messages resulted in {prompt} tokens. "
            "Please reduce the length of the messages."
        )
        return ServerError(400, message, flavor)
    if flavor == "lmstudio":
        message = (
            f"Trying to keep the first {prompt} tokens when context the overflows. However, "
            f"the model is loaded with context length of only {window} tokens, which is not "
            "enough. Try to load the model with a larger context length, or provide a shorter "
            "input"
        )
        return ServerError(400, message, flavor)
    if flavor == "tgi":
        if isinstance(max_tokens, int):
            message = (
                f"Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
                f"{window}. Given: {prompt} `inputs` tokens and {max_tokens} `max_new_tokens`"
            )
        else:
            message = (
                f"Input validation error: `inputs` must have less than {window} tokens. "
                f"Given: {prompt}"
            )
        return ServerError(422, message, flavor)
    if flavor == "gemini":
        message = (
            f"The input token count ({prompt}) exceeds the maximum number of tokens allowed "
            f"({window})."
        )
        return ServerError(400, message, flavor)
    if flavor == "ollama":  # only with ``shift: false``, which /v1 cannot send
        message = (
            "the prompt is longer than the context length currently available to the model; "
            "shorten the prompt, adjust the context length in settings, or use a model with a "
            "longer context length"
        )
        return ServerError(400, message, flavor)
    if isinstance(max_tokens, int):
        return ServerError(
            400,
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion.",
            flavor,
        )
    return ServerError(
        400,
        f"This model's maximum context length is {window} tokens. However, your request has "
        f"{prompt} input tokens. Please reduce the length of the input messages.",
        flavor,
    )


def truncated_prompt(prompt: int, window: int) -> int:
    """What Ollama keeps of a ``prompt``-token prompt over a ``window``-token context: the
    front but ``num_keep`` (4, plus BOS) is dropped down to ``window - (window - keep) // 2``
    tokens [``llm/llama_server.go`` ``contextShiftPromptLimit``]."""
    keep = 5
    return window - (window - keep) // 2 if prompt > window - 1 else prompt


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
