"""Reading a "the prompt does not fit" refusal: is it one, how big was the request, which
window did it name, and did the output it asked for count against that window.

The servers word it differently (each wording below was seen in the server's own source or
in a captured answer quoted in an issue; ``tests/unit/providers/test_learned_windows.py``
has one of each):

* Anthropic: ``prompt is too long: 22036 tokens > 20000 maximum``; and where the window
  bounds prompt and output together, ``input length and `max_tokens` exceed context limit:
  199759 + 8192 > 200000, decrease input length or `max_tokens` and try again``
  (continuedev/continue#6080, anthropics/claude-code#408).
* vLLM and OpenAI: ``This model's maximum context length is 8192 tokens. However, you
  requested 9100 tokens (8000 in the messages, 1100 in the completion)`` / ``... your
  request has 8200 input tokens`` / ``... your messages resulted in 8300 tokens``
  (OpenRouter: ``This endpoint's maximum context length is ... you requested about ...``);
  vLLM's output check: ``'max_tokens' or 'max_completion_tokens' is too large: 1000. This
  model's maximum context length is 4096 tokens and your request has 3500 input tokens``;
  vLLM's engine check: ``The decoder prompt (length 17571) is longer than the maximum model
  length of 16000``; OpenAI's newer endpoints: code ``context_length_exceeded``, ``Your
  input exceeds the context window of this model`` (no numbers).
* llama.cpp's server (and Ollama's native API with ``truncate: false``, which runs it):
  ``request (8889 tokens) exceeds the available context size (4096 tokens), try increasing
  it`` with ``"type": "exceed_context_size_error", "n_prompt_tokens": 8889, "n_ctx": 4096``
  in the error object; older builds: ``the request exceeds the available context size, try
  increasing it`` (no numbers).
* Ollama with ``shift: false``: ``the prompt is longer than the context length currently
  available to the model; ...`` (no numbers); its own runner with ``truncate: false``:
  ``the input length exceeds the context length`` (no numbers).
* Gemini's OpenAI-compatible endpoint: ``The input token count (1200293) exceeds the
  maximum number of tokens allowed (1048576).`` in a list-shaped body
  (google-gemini/gemini-cli#6678).
* Hugging Face TGI (HTTP 422): ``Input validation error: `inputs` tokens + `max_new_tokens`
  must be <= 2048. Given: 1887 `inputs` tokens and 1024 `max_new_tokens``` and ```inputs`
  must have less than 1024 tokens. Given: 1500`` (opea-project/GenAIInfra#487,
  huggingface/llm-vscode#94).
* LM Studio (``{"error": "<text>"}``): ``Trying to keep the first 15857 tokens when context
  the overflows. However, the model is loaded with context length of only 4096 tokens``;
  newer builds: ``The number of tokens to keep from the initial prompt is greater than the
  context length (n_keep: 13055>= n_ctx: 4096)`` (lmstudio-ai/lmstudio-bug-tracker#237,
  #546; Gitlawb/openclaude#353).
* SGLang: ``Input length (160062 tokens) exceeds the maximum allowed length (59862
  tokens)`` (sgl-project/sglang#4048).
* LiteLLM wraps the upstream refusal: ``litellm.ContextWindowExceededError: ...`` followed
  by the upstream's own words (so one of the patterns above usually matches too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MARKERS = (
    "prompt is too long",
    "exceed context limit",
    "maximum context length",
    "context length",
    "context size",
    "context window",
    "context_length_exceeded",
    "exceed_context_size_error",
    "contextwindowexceedederror",
    "maximum model length",
    "maximum number of tokens allowed",
    "`max_new_tokens` must be <=",
    "`inputs` must have less than",
    "maximum allowed length",
)
"""Lower-cased phrases that mark a refusal as "does not fit" (with a 400, 413 or 422)."""
OVERFLOW_STATUSES = (400, 413, 422)

_N = r"(\d[\d,]*)"


@dataclass(frozen=True)
class _Wording:
    """One server's sentence; the groups it captures, in order, name these fields."""

    pattern: re.Pattern[str]
    fields: tuple[str, ...]


def _w(pattern: str, *fields: str) -> _Wording:
    return _Wording(re.compile(pattern.replace("N", _N), re.IGNORECASE), fields)


# fmt: off
WORDINGS = (
    _w(r"prompt is too long: N tokens > N maximum", "tokens", "limit"),
    _w(r"exceed context limit: N \+ N > N", "tokens", "output", "limit"),
    _w(r"is too large: N\. This model's maximum context length is N tokens and your request "
       r"has N input tokens", "output", "limit", "tokens"),
    _w(r"maximum context length is N tokens\. However, you requested (?:about )?N tokens "
       r"\(N in the messages, N in the completion\)", "limit", "", "tokens", "output"),
    _w(r"decoder prompt \(length N\) is longer than the maximum model length of N",
       "tokens", "limit"),
    _w(r"input token count \(N\) exceeds the maximum number of tokens allowed \(N\)",
       "tokens", "limit"),
    _w(r"`inputs` tokens \+ `max_new_tokens` must be <= N\. Given: N `inputs` tokens and N "
       r"`max_new_tokens`", "limit", "tokens", "output"),
    _w(r"`inputs` must have less than N tokens\. Given: N", "limit", "tokens"),
    _w(r"keep the first N tokens when context the overflows\. However, the model is loaded "
       r"with context length of only N tokens", "tokens", "limit"),
    _w(r"n_keep: N\s*>=\s*n_ctx: N", "tokens", "limit"),
    _w(r"input length \(N tokens\) exceeds the maximum allowed length \(N tokens\)",
       "tokens", "limit"),
    _w(r"context size \(N tokens\)", "limit"),
    _w(r"maximum context length is N tokens", "limit"),
)
# fmt: on
_REQUESTED = re.compile(
    r"(?:you requested|your request has|your messages resulted in|request \()\s*(?:about )?"
    rf"{_N}(?: input)? tokens",
    re.IGNORECASE,
)
_FIELD = re.compile(r'"(n_prompt_tokens|n_ctx)"\s*:\s*(\d+)')


@dataclass(frozen=True)
class Overflow:
    """What a refusal said about the request and the window (None: not named)."""

    tokens: int | None = None
    """The prompt's size, in the server's tokens."""
    limit: int | None = None
    """The window."""
    output: int | None = None
    """The output tokens the request asked for, where the refusal counted them against the
    window with the prompt: a smaller ``max_tokens`` may be all it takes."""


def is_overflow(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in MARKERS)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def read_overflow(text: str, fields: Mapping[str, object] | None = None) -> Overflow:
    """The request's size, the window and the counted output named in ``text`` (a message,
    or a whole body) or in the error object's ``fields`` (llama.cpp's ``n_prompt_tokens``
    and ``n_ctx``)."""
    found: dict[str, int] = {}
    for wording in WORDINGS:
        match = wording.pattern.search(text)
        if match is None:
            continue
        for name, value in zip(wording.fields, match.groups(), strict=True):
            if name:
                found.setdefault(name, _int(value))
        if "tokens" in found and "limit" in found:
            break
    numbers = {name: int(value) for name, value in _FIELD.findall(text)}
    for name in ("n_prompt_tokens", "n_ctx"):
        value = (fields or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            numbers[name] = value
    if "n_ctx" in numbers:
        found["limit"] = numbers["n_ctx"]
    if "n_prompt_tokens" in numbers:
        found["tokens"] = numbers["n_prompt_tokens"]
    if "tokens" not in found:
        requested = _REQUESTED.search(text)
        if requested:
            found["tokens"] = _int(requested.group(1))
    limit = found.get("limit") or None
    return Overflow(found.get("tokens"), limit, found.get("output"))
