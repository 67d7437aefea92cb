"""The step a turn is at, in words, for ``$/progress``: "Reading 3 files", "Editing ops.py",
"Running the tests". Clients without a Tether plugin show nothing else while a turn runs.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any
from urllib.parse import urlparse

from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Notice,
    SessionUpdate,
    ToolCall,
)

TEST_COMMAND = re.compile(
    r"\b(pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|unittest)\b"
    r"|\b(npm|yarn|pnpm|bun)\s+(run\s+)?test\b"
    r"|\b(cargo|go|mix|dotnet|gradle|mvn|make|deno|zig|swift|bazel)\s+test\b"
)
"""Commands that run a test suite; they show as "Running the tests"."""
COMMAND_CHARS = 40


class StepNamer:
    """Names each step of one turn. Reads the model asks for together count as one step."""

    def __init__(self) -> None:
        self._reads = 0

    def name(self, update: SessionUpdate) -> str | None:
        """The step ``update`` starts, or None when it starts none."""
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk):
            self._reads = 0
            return None
        if isinstance(update, Notice) and update.progress:
            return update.message[:1].upper() + update.message[1:]  # "Waiting for …"
        if not isinstance(update, ToolCall):
            return None
        if update.tool_kind == "read":
            self._reads += 1
            if self._reads > 1:
                return f"Reading {self._reads} files"
        else:
            self._reads = 0
        return describe(update)


def describe(call: ToolCall) -> str:
    """One tool call as a step a user follows."""
    inp = call.raw_input
    name = _file_name(inp)
    kind = call.tool_kind
    if kind == "read":
        return f"Reading {name}" if name else call.title
    if kind == "edit":
        return f"Editing {name}" if name else call.title
    if kind == "delete":
        return f"Deleting {name}" if name else call.title
    if kind == "move":
        return f"Moving {name}" if name else call.title
    if kind == "search":
        pattern = inp.get("pattern") or inp.get("query")
        return f"Searching for {_short(str(pattern))}" if pattern else "Searching the code"
    if kind == "execute":
        command = inp.get("command")
        if isinstance(command, str):
            if TEST_COMMAND.search(command):
                return "Running the tests"
            return f"Running {_short(command.strip().splitlines()[0] if command.strip() else '')}"
        return call.title
    if kind == "fetch":
        url = inp.get("url")
        return (
            f"Fetching {urlparse(url).netloc or url}"
            if isinstance(url, str)
            else "Searching the web"
        )
    if kind == "think":
        return "Thinking"
    if "todos" in inp:
        return "Updating the plan"
    return call.title


def _file_name(inp: dict[str, Any]) -> str | None:
    for key in ("file_path", "notebook_path", "path"):
        value = inp.get(key)
        if isinstance(value, str) and value:
            return PurePath(value).name or value
    return None


def _short(text: str) -> str:
    return text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 1] + "…"
