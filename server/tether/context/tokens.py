"""Token estimates for what is about to be sent.

The API's usage numbers are exact but only arrive after a request. ``ContextGauge`` anchors
on the last response's usage (input + cache + output: the whole history up to that reply)
and adds an estimate of only what came after it; the estimate alone is used until a first
response, and again after the history was rewritten (compaction, cleared results).

``estimate_text`` counts by script: ASCII text at about 3.5 characters a token, other
alphabetic scripts (Cyrillic, Greek, accented Latin...) at about 2, and CJK, kana, Hangul
and other wide characters at about one token each (a 3.5-chars rule undercounts Chinese
text three- to fourfold).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from tether.core.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from tether.providers.base import SystemBlock, TokenUsage, ToolSpec

CHARS_PER_TOKEN = 3.5
OTHER_CHARS_PER_TOKEN = 2.0
IMAGE_TOKENS = 1_600
DOCUMENT_TOKENS_PER_KB = 40
"""A PDF costs text plus a page image per page; about this much per kilobyte of base64."""
MESSAGE_OVERHEAD = 4
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WIDE = re.compile(
    r"[\u1100-\u11ff\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]"
)


def estimate_text(text: str) -> int:
    if text.isascii():
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    other = len(_NON_ASCII.findall(text))
    wide = len(_WIDE.findall(text))
    ascii_chars = len(text) - other
    return math.ceil(ascii_chars / CHARS_PER_TOKEN + (other - wide) / OTHER_CHARS_PER_TOKEN + wide)


def estimate_message(message: Message) -> int:
    return _estimates(message)[0]


def _estimates(message: Message) -> tuple[int, int]:
    """The message's estimate, and the part of it that is a guess rather than a count:
    images, documents and the provider's own tool blocks (search results), whose size is
    the server's to know."""
    total = MESSAGE_OVERHEAD
    guessed = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            total += estimate_text(block.text)
        elif isinstance(block, ThinkingBlock):
            total += estimate_text(block.thinking)
        elif isinstance(block, ToolUseBlock):
            total += estimate_text(block.name) + estimate_text(json.dumps(block.input))
        elif isinstance(block, ToolResultBlock):
            for part in block.content:
                tokens = _part_tokens(part)
                total += tokens
                guessed += 0 if isinstance(part, TextBlock) else tokens
        else:
            tokens = _document_tokens(block) if isinstance(block, DocumentBlock) else IMAGE_TOKENS
            total += tokens
            guessed += tokens
    return total, guessed


def _document_tokens(block: DocumentBlock) -> int:
    return max(IMAGE_TOKENS, len(block.data) // 1024 * DOCUMENT_TOKENS_PER_KB)


def _part_tokens(part: TextBlock | ImageBlock | DocumentBlock) -> int:
    if isinstance(part, TextBlock):
        return estimate_text(part.text)
    if isinstance(part, DocumentBlock):
        return _document_tokens(part)
    return IMAGE_TOKENS


class TokenCounter:
    """Estimates with a per-message cache: messages are immutable once in the history, so
    a request over a long history only estimates what is new."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Message, int, int]] = {}
        self._prefix_key: tuple[object, ...] | None = None
        self._prefix = 0
        self._prefix_schemas: list[dict[str, object]] = []
        """The schemas keyed by identity in ``_prefix_key``, kept so their ids stay unique."""

    def message(self, message: Message) -> int:
        return self._entry(message)[1]

    def guessed(self, message: Message) -> int:
        """The part of ``message``'s estimate that is a guess (see ``_estimates``)."""
        return self._entry(message)[2]

    def _entry(self, message: Message) -> tuple[Message, int, int]:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit
        entry = (message, *_estimates(message))
        self._cache[id(message)] = entry
        return entry

    def messages(self, messages: Sequence[Message]) -> int:
        return sum(self.message(m) for m in messages)

    def retain(self, messages: Sequence[Message]) -> None:
        """Drop the entries of messages that left the history (``messages`` is all of it)."""
        if len(self._cache) > 4 * len(messages) + 64:
            live = {id(m) for m in messages}
            self._cache = {k: v for k, v in self._cache.items() if k in live}

    def prefix(self, system: Sequence[SystemBlock], tools: Sequence[ToolSpec]) -> int:
        # Tool schemas are cached per tool model (tools/base.py): their identity is a key.
        key = (*system, *((t.name, t.description, id(t.input_schema)) for t in tools))
        if key != self._prefix_key:
            self._prefix_key = key
            self._prefix = prefix_tokens(system, tools)
            self._prefix_schemas = [t.input_schema for t in tools]
        return self._prefix


def prefix_tokens(system: Sequence[SystemBlock], tools: Sequence[ToolSpec]) -> int:
    text = sum(estimate_text(b.text) for b in system)
    schemas = sum(
        estimate_text(t.description) + estimate_text(json.dumps(t.input_schema)) for t in tools
    )
    return text + schemas


class RunningEstimate:
    """The estimate of a whole history, extended as the history grows (O(new messages)
    per call) and recomputed when it was replaced or rewritten (``reset``)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._count = 0
        self._last: Message | None = None
        self._total = 0
        self.guessed = 0
        """The part of the last ``of`` that is a guess (images, documents, search results)."""

    def reset(self) -> None:
        self._count, self._last, self._total, self.guessed = 0, None, 0, 0

    def of(self, messages: Sequence[Message]) -> int:
        count = self._count
        if count > len(messages) or (count and messages[count - 1] is not self._last):
            count, self._total, self.guessed = 0, 0, 0
            self.counter.retain(messages)
        for message in messages[count:]:
            self._total += self.counter.message(message)
            self.guessed += self.counter.guessed(message)
        self._count = len(messages)
        self._last = messages[-1] if messages else None
        return self._total


class ContextGauge:
    """The context size: the last response's usage plus an estimate of what was added since."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._tokens: int | None = None
        self._count = 0
        self._last: Message | None = None
        self.ratio = 1.0
        """The API's count over our estimate at the last anchor: scales later estimates
        (kept within 0.5-2), so sizes before and after a compaction compare."""

    def observe(self, messages: Sequence[Message], usage: TokenUsage, estimate: int) -> None:
        """A response arrived and was appended: ``usage`` covers ``messages`` whole;
        ``estimate`` is our estimate of the same."""
        if not messages or usage.context_tokens <= 0:
            return
        self._tokens = usage.context_tokens + usage.output_tokens
        self._count = len(messages)
        self._last = messages[-1]
        if estimate > 0:
            self.ratio = min(max(self._tokens / estimate, 0.5), 2.0)

    def invalidate(self) -> None:
        """The history before the anchor changed (results cleared or stored, a summary)."""
        self._tokens = None

    def measure(self, messages: Sequence[Message]) -> int | None:
        """Tokens of ``messages`` from the anchor, or None when there is no valid anchor."""
        if self._tokens is None or len(messages) < self._count:
            return None
        if messages[self._count - 1] is not self._last:
            return None  # the history was replaced since
        return self._tokens + self.counter.messages(messages[self._count :])
