"""How the engine sees its tools: the context of a call, safety flags, titles, and the
rules a user's "always allow" adds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tether.core.messages import ToolUseBlock
from tether.editor.port import Editor
from tether.permissions.network import HostQuestions
from tether.permissions.policy import RuleSet
from tether.permissions.rules import Rule
from tether.protocol.updates import Location, SessionUpdate, ToolKind
from tether.tasks.registry import TaskRegistry
from tether.tools.base import Tool
from tether.tools.context import SessionRunState, ToolConfig, ToolContext
from tether.tools.pool import ToolPool

PersistRule = Callable[[Literal["allow", "deny"], str], None]
"""Saves a rule the user chose to keep (the workspace writes it to the local settings)."""


@dataclass
class Tooling:
    session_id: str
    cwd: Path
    editor: Editor
    state: SessionRunState
    config: ToolConfig
    tasks: TaskRegistry
    pool: ToolPool
    rules: RuleSet
    emit: Callable[[SessionUpdate], None]
    persist_rule: PersistRule | None = None
    results_dir: Path | None = None
    """Where oversized tool results are stored: the model may read them back in parts."""

    def tool_context(self, tool_use_id: str) -> ToolContext:
        return ToolContext(
            session_id=self.session_id,
            tool_use_id=tool_use_id,
            cwd=self.cwd,
            editor=self.editor,
            state=self.state,
            config=self.config,
            tasks=self.tasks,
            emit=self.emit,
            read_only_dirs=[self.results_dir] if self.results_dir is not None else [],
            network=HostQuestions(
                editor=self.editor,
                session_id=self.session_id,
                tool_call_id=tool_use_id,
                state=self.state,
                config=self.config,
                root=self.cwd,
                rules=self.rules,
                remember=self.remember_rule,
            ),
        )

    def remember_rule(self, kind: Literal["allow", "deny"], rule: str) -> None:
        parsed = Rule.parse(rule)
        (self.rules.allow if kind == "allow" else self.rules.deny).append(parsed)
        if self.persist_rule is not None:
            self.persist_rule(kind, rule)

    def _parse(self, use: ToolUseBlock) -> tuple[Tool[Any], Any] | None:
        tool = self.pool.get(use.name)
        if tool is None or use.truncated or use.refused is not None:
            return None
        data = tool.parse(use.input)
        return None if isinstance(data, str) else (tool, data)

    def is_concurrency_safe(self, use: ToolUseBlock) -> bool:
        parsed = self._parse(use)
        # Calls that will fail validation have no side effects: they may run concurrently.
        return True if parsed is None else parsed[0].is_concurrency_safe(parsed[1])

    def is_read_only(self, use: ToolUseBlock) -> bool:
        parsed = self._parse(use)
        return True if parsed is None else parsed[0].is_read_only(parsed[1])

    def describe_call(self, use: ToolUseBlock) -> tuple[str, ToolKind, list[Location]]:
        parsed = self._parse(use)
        if parsed is None:
            tool = self.pool.get(use.name)
            return use.name, tool.kind if tool else "other", []
        tool, data = parsed
        try:
            return tool.title(data), tool.kind, tool.locations(data, self.tool_context(use.id))
        except Exception:
            return use.name, tool.kind, []
