"""Reading a "the prompt does not fit" refusal: is it one, and which window did it name.

The servers word it differently (each pattern below was seen in the server's own source
or in a captured answer):

* Anthropic: ``prompt is too long: 22036 tokens > 20000 maximum``.
* vLLM and OpenAI: ``This model's maximum context length is 8192 tokens. However, you
  requested 9100 tokens (...)`` / ``... your request has 8200 input tokens`` / ``... your
  messages resulted in 8300 tokens``; vLLM's output check: ``'max_tokens' ... is too large:
  1000. This model's maximum context length is 4096 tokens and your request has 3500 input
  tokens``.
* llama.cpp's server (and Ollama's native API with ``truncate: false``, which runs it):
  ``request (8889 tokens) exceeds the available context size (4096 tokens), try increasing
  it`` with ``"type": "exceed_context_size_error", "n_prompt_tokens": 8889, "n_ctx": 4096``
  in the error object; older builds: ``the request exceeds the available context size, try
  increasing it`` (no numbers).
* Ollama with ``shift: false``: ``the prompt is longer than the context length currently
  available to the model; ...`` (no numbers).
* LiteLLM wraps the upstream refusal: ``litellm.ContextWindowExceededError: ...`` followed
  by the upstream's own words (so one of the patterns above usually matches too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MARKERS = (
    "prompt is too long",
    "maximum context length",
    "context length",
    "context size",
    "context_length_exceeded",
    "exceed_context_size_error",
    "contextwindowexceedederror",
)
"""Lower-cased phrases that mark a refusal as "does not fit" (with a 400 or 413)."""

_ANTHROPIC = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")
_MAX_CONTEXT = re.compile(r"maximum context length is (\d+) tokens")
_REQUESTED = re.compile(
    r"(?:you requested|your request has|your messages resulted in|request \()\s*(\d+)"
    r"(?: input)? tokens"
)
_CONTEXT_SIZE = re.compile(r"context size \((\d+) tokens\)")
_FIELD = re.compile(r'"(n_prompt_tokens|n_ctx)"\s*:\s*(\d+)')


@dataclass(frozen=True)
class Overflow:
    """What a refusal said about the request and the window (None: not named)."""

    tokens: int | None = None
    limit: int | None = None


def is_overflow(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in MARKERS)


def read_overflow(text: str, fields: Mapping[str, object] | None = None) -> Overflow:
    """The request's size and the window named in ``text`` (a message, or a whole body) or
    in the error object's ``fields`` (llama.cpp's ``n_prompt_tokens`` and ``n_ctx``)."""
    found = _ANTHROPIC.search(text)
    if found:
        return Overflow(int(found.group(1)), int(found.group(2)))
    numbers = {name: int(value) for name, value in _FIELD.findall(text)}
    for name in ("n_prompt_tokens", "n_ctx"):
        value = (fields or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            numbers[name] = value
    limit = numbers.get("n_ctx")
    if limit is None:
        found = _MAX_CONTEXT.search(text) or _CONTEXT_SIZE.search(text)
        limit = int(found.group(1)) if found else None
    tokens = numbers.get("n_prompt_tokens")
    if tokens is None:
        found = _REQUESTED.search(text)
        tokens = int(found.group(1)) if found else None
    return Overflow(tokens, limit if limit and limit > 0 else None)
