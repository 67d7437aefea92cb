"""The engine's side of the Agent tool: subagents run as child engines.

The Agent tool (``agents/tool.py``) knows subagents only through its ``Spawner`` and
``Subagent`` protocols; this module implements them over an engine, which the parent
engine builds (``QueryEngine.spawn_child``) and hands in as ``make_child``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from tether.agents.definitions import AgentDefinition
from tether.agents.tool import SubagentReport
from tether.core.messages import Message
from tether.engine.turns import TurnResult
from tether.protocol.updates import SessionUpdate


class ChildEngine(Protocol):
    """What running a subagent needs of its engine."""

    @property
    def session_id(self) -> str: ...

    @property
    def messages(self) -> list[Message]: ...

    @property
    def last_result(self) -> TurnResult | None: ...

    def submit(self, prompt: str) -> AsyncIterator[SessionUpdate]: ...

    async def close(self) -> None: ...


MakeChild = Callable[[AgentDefinition, str, bool], ChildEngine]
"""(definition, the Agent tool call's id, in the background?) -> the child's engine."""


class EngineSubagent:
    def __init__(self, engine: ChildEngine) -> None:
        self.engine = engine

    @property
    def agent_id(self) -> str:
        return self.engine.session_id

    async def run(self, prompt: str, on_update: Callable[[SessionUpdate], None]) -> SubagentReport:
        child = self.engine
        try:
            async for update in child.submit(prompt):
                on_update(update)
        finally:
            await child.close()
        result = child.last_result
        assert result is not None
        return SubagentReport(
            text=_final_text(child.messages, result),
            completed=result.terminal.reason == "completed",
            stop_reason=result.terminal.stop_reason,
        )


@dataclass(frozen=True)
class EngineSpawner:
    definitions: Mapping[str, AgentDefinition]
    max_depth: int
    make_child: MakeChild

    def spawn(
        self, definition: AgentDefinition, *, tool_use_id: str, background: bool
    ) -> EngineSubagent:
        return EngineSubagent(self.make_child(definition, tool_use_id, background))


def _final_text(messages: list[Message], result: TurnResult) -> str:
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    text = last.text.strip() if last is not None else ""
    if result.terminal.reason != "completed":
        terminal = result.terminal
        return f"The agent stopped early ({terminal.reason}: {terminal.message}).\n{text}"
    return text or "(the agent finished without a report)"
