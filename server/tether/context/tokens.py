"""Token estimates for what is about to be sent. The API's usage numbers are exact but only
arrive after a request; before one, this estimator decides whether to compact."""

from __future__ import annotations

import json
import math
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
from tether.providers.base import SystemBlock, ToolSpec

CHARS_PER_TOKEN = 3.5
IMAGE_TOKENS = 1_600
DOCUMENT_TOKENS_PER_KB = 40
"""A PDF costs text plus a page image per page; about this much per kilobyte of base64."""
MESSAGE_OVERHEAD = 4


def estimate_text(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message(message: Message) -> int:
    total = MESSAGE_OVERHEAD
    for block in message.content:
        if isinstance(block, TextBlock):
            total += estimate_text(block.text)
        elif isinstance(block, ThinkingBlock):
            total += estimate_text(block.thinking)
        elif isinstance(block, ToolUseBlock):
            total += estimate_text(block.name) + estimate_text(json.dumps(block.input))
        elif isinstance(block, ToolResultBlock):
            for part in block.content:
                total += _part_tokens(part)
        elif isinstance(block, DocumentBlock):
            total += _document_tokens(block)
        else:
            total += IMAGE_TOKENS
    return total


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
        self._cache: dict[int, tuple[Message, int]] = {}

    def message(self, message: Message) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        value = estimate_message(message)
        self._cache[id(message)] = (message, value)
        return value

    def messages(self, messages: Sequence[Message]) -> int:
        total = sum(self.message(m) for m in messages)
        if len(self._cache) > 4 * len(messages) + 64:  # drop entries of replaced messages
            live = {id(m) for m in messages}
            self._cache = {k: v for k, v in self._cache.items() if k in live}
        return total

    @staticmethod
    def prefix(system: Sequence[SystemBlock], tools: Sequence[ToolSpec]) -> int:
        text = sum(estimate_text(b.text) for b in system)
        schemas = sum(
            estimate_text(t.description) + estimate_text(json.dumps(t.input_schema)) for t in tools
        )
        return text + schemas
