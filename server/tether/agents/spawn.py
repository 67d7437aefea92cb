"""Create a subagent: a fresh engine holding only its task, with its definition's system
prompt and tool set, the parent's editor, rules and hooks, and a side-chain transcript
linked to the parent's tool call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.agents.definitions import AgentDefinition
from tether.core.hooks import SubagentHooks
from tether.engine.context import ContextAssembler
from tether.permissions.policy import RuleSet
from tether.tasks.registry import TaskRegistry, new_task_id
from tether.tools.context import SessionRunState
from tether.transcript.records import ProgressRecord
from tether.transcript.writer import TranscriptWriter

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine


def side_chain_path(parent: QueryEngine, agent_id: str) -> Path | None:
    if parent.transcript is None:
        return None
    return parent.transcript.path.parent / parent.session_id / "subagents" / f"{agent_id}.jsonl"


def spawn_child(
    parent: QueryEngine, definition: AgentDefinition, *, tool_use_id: str, background: bool
) -> QueryEngine:
    from tether.engine.engine import EngineConfig, QueryEngine

    agent_id = new_task_id()
    allowed = set(definition.tools) if definition.tools is not None else None
    tools = [
        t for t in parent.tools.core if (allowed is None or t.name in allowed) and t.name != "Agent"
    ]
    state = SessionRunState(
        mode="plan" if definition.read_only else parent.state.mode,
        agent_depth=parent.state.agent_depth + 1,
        background_worker=background or parent.state.background_worker,
    )
    writer = None
    path = side_chain_path(parent, agent_id)
    if path is not None:
        writer = TranscriptWriter(path, agent_id)
        writer.open()
        parent.record(
            ProgressRecord(
                session_id=parent.session_id,
                event="subagent",
                data={
                    "agentId": agent_id,
                    "toolUseId": tool_use_id,
                    "type": definition.name,
                    "path": str(path),
                    "background": background,
                },
            )
        )
    assembler = ContextAssembler(
        cwd=parent.cwd,
        model=parent.provider.model,
        max_tokens=parent.assembler.max_tokens,
        agent=definition.prompt,
    )
    rules = RuleSet(list(parent.rules.allow), list(parent.rules.ask), list(parent.rules.deny))
    child = QueryEngine(
        session_id=agent_id,
        cwd=parent.cwd,
        provider=parent.provider,
        tools=tools,
        editor=parent.editor,
        rules=rules,
        hooks=SubagentHooks(parent.hooks, str(path or "")),
        config=EngineConfig(max_turns=parent.config.subagent_max_turns),
        tool_config=parent.tool_config,
        state=state,
        transcript=writer,
        assembler=assembler,
        tasks=TaskRegistry(parent.tasks.output_dir / agent_id),
        title=definition.name,
        agent_definitions=parent.agent_definitions,
        parent_tool_use_id=tool_use_id,
    )
    return child
