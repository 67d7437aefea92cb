"""The engine's side of the Agent tool: a subagent is a child engine.

The Agent tool (``agents/tool.py``) knows subagents only through its ``Spawner`` and
``Subagent`` protocols; ``EngineSpawner`` implements them for a parent engine. A child is
a fresh engine holding only its task, with its definition's system prompt, tool set and
model (when it names one),
the parent's editor, rules and hooks, and a side-chain transcript linked to the parent's
tool call. The engine class comes in as ``make_engine``, so this module does not import
the engine that imports it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tether.agents.definitions import AgentDefinition
from tether.agents.tool import SubagentReport
from tether.core.hooks import AgentScope, Hooks, SubagentHooks, current_agent
from tether.core.messages import Message
from tether.editor.port import Editor
from tether.engine.context import ContextAssembler
from tether.engine.turns import EngineConfig, TurnResult
from tether.engine.usage import UsageMeter
from tether.errors import ConfigError, ToolError
from tether.permissions.policy import RuleSet
from tether.protocol.updates import SessionUpdate
from tether.providers.base import Provider
from tether.tasks.registry import TaskRegistry, new_task_id
from tether.tools.base import Tool
from tether.tools.context import SessionRunState, ToolConfig
from tether.tools.pool import ToolPool
from tether.transcript.payloads import SubagentData
from tether.transcript.records import ProgressRecord, Record
from tether.transcript.writer import TranscriptWriter


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


class ParentEngine(Protocol):
    """What a child is made from."""

    @property
    def session_id(self) -> str: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def provider(self) -> Provider: ...

    @property
    def provider_for(self) -> Callable[[str], Provider] | None: ...

    @property
    def tools(self) -> ToolPool: ...

    @property
    def editor(self) -> Editor: ...

    @property
    def rules(self) -> RuleSet: ...

    @property
    def hooks(self) -> Hooks: ...

    @property
    def config(self) -> EngineConfig: ...

    @property
    def tool_config(self) -> ToolConfig: ...

    @property
    def state(self) -> SessionRunState: ...

    @property
    def assembler(self) -> ContextAssembler: ...

    @property
    def tasks(self) -> TaskRegistry: ...

    @property
    def transcript(self) -> TranscriptWriter | None: ...

    @property
    def agent_definitions(self) -> dict[str, AgentDefinition]: ...

    @property
    def meter(self) -> UsageMeter: ...

    def record(self, record: Record) -> None: ...


class MakeEngine(Protocol):
    """The engine's constructor, as far as a child needs it."""

    def __call__(
        self,
        *,
        session_id: str,
        cwd: Path,
        provider: Provider,
        tools: Sequence[Tool[Any]],
        editor: Editor,
        rules: RuleSet | None = None,
        hooks: Hooks | None = None,
        config: EngineConfig | None = None,
        tool_config: ToolConfig | None = None,
        state: SessionRunState | None = None,
        transcript: TranscriptWriter | None = None,
        assembler: ContextAssembler | None = None,
        tasks: TaskRegistry | None = None,
        title: str | None = None,
        agent_definitions: dict[str, AgentDefinition] | None = None,
        parent_tool_use_id: str | None = None,
        parent_meter: UsageMeter | None = None,
        provider_for: Callable[[str], Provider] | None = None,
    ) -> ChildEngine: ...


class EngineSubagent:
    def __init__(self, engine: ChildEngine, agent_type: str = "general-purpose") -> None:
        self.engine = engine
        self.agent_type = agent_type

    @property
    def agent_id(self) -> str:
        return self.engine.session_id

    async def run(self, prompt: str, on_update: Callable[[SessionUpdate], None]) -> SubagentReport:
        child = self.engine
        # Its hooks' inputs and its questions name the agent (whatever tasks it starts).
        scope = current_agent.set(AgentScope(self.agent_id, self.agent_type))
        try:
            async for update in child.submit(prompt):
                on_update(update)
        finally:
            current_agent.reset(scope)
            await child.close()
        result = child.last_result
        assert result is not None
        return SubagentReport(
            text=_final_text(child.messages, result),
            completed=result.terminal.reason == "completed",
            stop_reason=result.terminal.stop_reason,
        )


class EngineSpawner:
    def __init__(self, parent: ParentEngine, *, make_engine: MakeEngine) -> None:
        self.parent = parent
        self.make_engine = make_engine

    @property
    def definitions(self) -> Mapping[str, AgentDefinition]:
        return self.parent.agent_definitions

    @property
    def max_depth(self) -> int:
        return self.parent.config.max_agent_depth

    def spawn(
        self, definition: AgentDefinition, *, tool_use_id: str, background: bool
    ) -> EngineSubagent:
        parent = self.parent
        agent_id = new_task_id()
        allowed = set(definition.tools) if definition.tools is not None else None
        tools = [
            t
            for t in parent.tools.core
            if (allowed is None or t.name in allowed) and t.name != "Agent"
        ]
        state = SessionRunState(
            mode="plan" if definition.read_only else parent.state.mode,
            agent_depth=parent.state.agent_depth + 1,
            background_worker=background or parent.state.background_worker,
            threads=parent.state.threads,
        )
        writer = None
        path = side_chain_path(parent, agent_id)
        if path is not None:
            writer = TranscriptWriter(path, agent_id)
            writer.open()
            parent.record(
                ProgressRecord(
                    session_id=parent.session_id,
                    data=SubagentData(
                        agent_id=agent_id,
                        tool_use_id=tool_use_id,
                        type=definition.name,
                        path=str(path),
                        background=background,
                    ),
                )
            )
        provider = _provider(parent, definition)
        assembler = ContextAssembler(
            cwd=parent.cwd,
            model=provider.model,
            max_tokens=parent.assembler.max_tokens,
            agent=definition.prompt,
            caller=parent.assembler.caller,
        )
        rules = RuleSet(list(parent.rules.allow), list(parent.rules.ask), list(parent.rules.deny))
        child = self.make_engine(
            session_id=agent_id,
            cwd=parent.cwd,
            provider=provider,
            tools=tools,
            editor=parent.editor,
            rules=rules,
            hooks=SubagentHooks(parent.hooks, str(path or "")),
            # The session's limits hold for the whole tree: the budget (spend is shared
            # through the meters) and how deep agents may nest.
            config=EngineConfig(
                max_turns=parent.config.subagent_max_turns,
                max_budget_usd=parent.config.max_budget_usd,
                max_agent_depth=parent.config.max_agent_depth,
                subagent_max_turns=parent.config.subagent_max_turns,
            ),
            tool_config=parent.tool_config,
            state=state,
            transcript=writer,
            assembler=assembler,
            tasks=TaskRegistry(parent.tasks.output_dir / agent_id),
            title=definition.name,
            agent_definitions=parent.agent_definitions,
            parent_tool_use_id=tool_use_id,
            parent_meter=parent.meter,
            provider_for=parent.provider_for,
        )
        return EngineSubagent(child, definition.name)


def _provider(parent: ParentEngine, definition: AgentDefinition) -> Provider:
    """The agent's own model when its definition names one (``model: haiku``...), built as
    the session builds its own; else the parent's. A model that cannot be built fails the
    Agent call with the reason, never runs on another model in silence."""
    if definition.model is None or parent.provider_for is None:
        return parent.provider
    try:
        return parent.provider_for(definition.model)
    except ConfigError as e:
        raise ToolError(
            f"The agent {definition.name} names the model {definition.model!r}, which cannot "
            f"be used: {e}"
        ) from None


def side_chain_path(parent: ParentEngine, agent_id: str) -> Path | None:
    if parent.transcript is None:
        return None
    return parent.transcript.path.parent / parent.session_id / "subagents" / f"{agent_id}.jsonl"


def _final_text(messages: list[Message], result: TurnResult) -> str:
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    text = last.text.strip() if last is not None else ""
    if result.terminal.reason != "completed":
        terminal = result.terminal
        return f"The agent stopped early ({terminal.reason}: {terminal.message}).\n{text}"
    return text or "(the agent finished without a report)"
