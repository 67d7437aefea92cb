"""The tools of one session.

Core tools are always sent to the model. Deferred tools (typically MCP tools, when there
are many) are sent only after the model has discovered them with ToolSearch: the search
result carries lightweight references (``<tool-reference name="..."/>``), and before each
request the pool scans the new part of the history for them. The scan is incremental, so
its cost per request is O(new messages), and the schemas sent are O(core + discovered).

Whether a group of tools (an MCP server's) is deferred is the ``DeferralPolicy``'s call:
deferring costs the model a search round-trip, so it pays only when the schemas would take a
noticeable share of the context window.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tether.core.messages import Message, TextBlock, ToolResultBlock
from tether.providers.base import ToolSpec
from tether.tools.base import Tool

REFERENCE = '<tool-reference name="{name}"/>'
_REFERENCE_RE = re.compile(r'<tool-reference name="([^"<>]+)"/>')


def reference(name: str) -> str:
    return REFERENCE.format(name=name)


def schema_bytes(tools: Iterable[Tool[Any]]) -> int:
    """Bytes of the tools' definitions as a request carries them (name, description, schema)."""
    total = 0
    for tool in tools:
        spec = tool.spec()
        total += len(
            json.dumps(
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.input_schema,
                },
                separators=(",", ":"),
            )
        )
    return total


@dataclass(frozen=True)
class DeferralPolicy:
    """When to hide extension tools behind ToolSearch (Claude Code's "auto" tool search)."""

    mode: Literal["auto", "always", "never"] = "auto"
    share: float = 0.05
    """In ``auto``: defer once the schemas would take more than this share of the window
    (Claude Code uses 10%; sent on every request, 5% is already a lot of tokens)."""
    bytes_per_token: float = 4.0

    def defer(self, tools: Sequence[Tool[Any]], context_window: int) -> bool:
        if self.mode != "auto" or not tools:
            return self.mode == "always" and bool(tools)
        tokens = schema_bytes(tools) / self.bytes_per_token
        return tokens > self.share * context_window


class ToolPool:
    def __init__(
        self, core: Iterable[Tool[Any]], *, removed: Callable[[str], bool] = lambda _n: False
    ) -> None:
        self._removed = removed
        self._core: dict[str, Tool[Any]] = {}
        self._deferred: dict[str, Tool[Any]] = {}
        self.discovered: set[str] = set()
        self._scanned_list: int | None = None
        self._scanned = 0
        for tool in core:
            self.add(tool)

    # -- membership -------------------------------------------------------------------

    def add(self, tool: Tool[Any], *, deferred: bool = False) -> None:
        """Add ``tool``, or move it between core and deferred when it is already here."""
        if self._removed(tool.name):
            return
        (self._core if deferred else self._deferred).pop(tool.name, None)
        (self._deferred if deferred else self._core)[tool.name] = tool

    def is_deferred(self, name: str) -> bool:
        return name in self._deferred

    def remove(self, name: str) -> None:
        self._core.pop(name, None)
        self._deferred.pop(name, None)

    def replace(self, tool: Tool[Any]) -> None:
        """Swap a tool for another of the same name, where it is (core or deferred)."""
        target = self._deferred if tool.name in self._deferred else self._core
        target[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        return self._core.get(name) or self._deferred.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._core or name in self._deferred

    def __iter__(self) -> Iterator[str]:
        yield from self._core
        yield from self._deferred

    def __len__(self) -> int:
        return len(self._core) + len(self._deferred)

    @property
    def core(self) -> list[Tool[Any]]:
        return list(self._core.values())

    @property
    def deferred(self) -> list[Tool[Any]]:
        return list(self._deferred.values())

    # -- what the model sees ----------------------------------------------------------

    def specs(self, messages: Sequence[Message] = ()) -> list[ToolSpec]:
        """Core tools, plus the deferred tools discovered in ``messages``."""
        specs = [t.spec() for t in self._core.values()]
        if self._deferred:
            self.scan(messages)
            specs += [t.spec() for n, t in self._deferred.items() if n in self.discovered]
        return specs

    def scan(self, messages: Sequence[Message]) -> None:
        """Collect tool references from the part of ``messages`` not scanned yet. A new or
        shorter list (compaction, rewind, resume) is scanned again from the start."""
        if self._scanned_list != id(messages) or self._scanned > len(messages):
            self._scanned_list = id(messages)
            self._scanned = 0
        for message in messages[self._scanned :]:
            if message.role != "user":
                continue
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    for part in block.content:
                        if isinstance(part, TextBlock) and "<tool-reference" in part.text:
                            self.discovered.update(_REFERENCE_RE.findall(part.text))
        self._scanned = len(messages)
