"""QueryEngine: one per conversation. ``submit`` runs a turn and yields its updates.

The engine owns the conversation (``messages``), the run state tools share, the usage
meter and the transcript writer. A turn runs as its own asyncio task feeding a queue, so
``cancel`` can stop it at any await (stream, tool, permission question) and the history is
closed consistently before ``turn_end`` is yielded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tether.editor.port import Editor
from tether.engine.context import ContextAssembler
from tether.engine.hooks import Hooks, NoHooks
from tether.engine.loop import TurnLoop
from tether.engine.messages import (
    INTERRUPTED_TOOL_RESULT,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_result,
)
from tether.engine.prompt_input import prompt_text, prompt_to_message
from tether.engine.transitions import Terminal, Transition
from tether.engine.usage import UsageMeter
from tether.orchestration.pipeline import ToolOutcome, ToolRuntime
from tether.permissions.policy import RuleSet
from tether.permissions.rules import Rule
from tether.protocol.content import ContentBlock, TextContent
from tether.protocol.updates import (
    Location,
    Mode,
    ModeChange,
    Plan,
    SessionUpdate,
    TaskUpdate,
    ToolKind,
    TurnEnd,
    Usage,
    UserMessage,
)
from tether.providers.base import Completed, Provider, ToolSpec
from tether.tasks.registry import Task, TaskRegistry
from tether.tools.base import Tool
from tether.tools.context import SessionRunState, ToolConfig, ToolContext
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    MetaRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
    now_iso,
)
from tether.transcript.writer import TranscriptWriter

log = logging.getLogger(__name__)

AttachmentSource = Callable[[], Awaitable[list[Message]]]


@dataclass
class EngineConfig:
    max_turns: int | None = None
    """Model requests per turn before stopping with ``max_turns``."""
    max_budget_usd: float | None = None
    max_tokens_continuations: int = 3
    max_stop_hook_blocks: int = 8


@dataclass
class TurnResult:
    turn_id: str
    terminal: Terminal
    usage: Usage
    model_calls: int = 0

    @property
    def stop_reason(self) -> str:
        return self.terminal.stop_reason


@dataclass
class _Queued:
    message: Message
    content: list[ContentBlock]
    future: asyncio.Future[TurnResult]


@dataclass
class _Turn:
    turn_id: str
    queue: asyncio.Queue[SessionUpdate | None] = field(
        default_factory=lambda: asyncio.Queue[SessionUpdate | None]()
    )
    task: asyncio.Task[None] | None = None
    waiters: list[asyncio.Future[TurnResult]] = field(
        default_factory=lambda: list[asyncio.Future[TurnResult]]()
    )


class TurnStream:
    """The updates of one running turn. Closing it early cancels the turn cleanly."""

    def __init__(self, turn: _Turn) -> None:
        self._turn = turn
        self.turn_id = turn.turn_id

    def __aiter__(self) -> TurnStream:
        return self

    async def __anext__(self) -> SessionUpdate:
        update = await self._turn.queue.get()
        if update is None:
            raise StopAsyncIteration
        return update

    async def aclose(self) -> None:
        task = self._turn.task
        if task is not None and not task.done():
            # The consumer went away (e.g. $/cancelRequest): stop the turn, keep history whole.
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)


class QueryEngine:
    def __init__(
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
        history: list[Message] | None = None,
        transcript: TranscriptWriter | None = None,
        assembler: ContextAssembler | None = None,
        tasks: TaskRegistry | None = None,
        title: str | None = None,
        remember_rule: Any = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.provider = provider
        self.editor = editor
        self.rules = rules or RuleSet()
        self.hooks: Hooks = hooks or NoHooks()
        self.config = config or EngineConfig()
        self.tool_config = tool_config or ToolConfig()
        self.state = state or SessionRunState()
        self.messages: list[Message] = list(history or [])
        self.transcript = transcript
        self.assembler = assembler or ContextAssembler(cwd=cwd, model=provider.model)
        self.meter = UsageMeter(provider.model, provider.context_window)
        self.title = title
        self.turns = 0
        self.tasks = tasks or TaskRegistry(
            Path(tempfile.gettempdir()) / "tether-tasks" / session_id
        )
        self.tasks.set_listener(self._task_changed)
        self._tools = {t.name: t for t in tools if not self.rules.removes_tool(t.name)}
        self._persist_rule = remember_rule
        self.tool_runtime = ToolRuntime(
            session_id=session_id,
            tools=self._tools,
            rules=self.rules,
            hooks=self.hooks,
            make_context=self._tool_context,
            remember_rule=self._remember_rule,
        )
        self._turn: _Turn | None = None
        self._loop: TurnLoop | None = None
        self._inbox: list[_Queued] = []
        self._notifications: list[Message] = []
        self.last_result: TurnResult | None = None
        self.created_at = now_iso()
        self.attachment_sources: list[AttachmentSource] = []
        """Called at each turn boundary; their messages go to the model as attachments."""
        self.on_idle_update: Callable[[SessionUpdate], None] | None = None
        """Receives updates that happen between turns (background task changes)."""

    # -- public API -----------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._turn is not None

    @property
    def current_turn_id(self) -> str | None:
        return self._turn.turn_id if self._turn else None

    def tool_specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values()]

    def start(
        self, prompt: str | Sequence[ContentBlock], *, turn_id: str | None = None
    ) -> TurnStream:
        """Start a turn now (synchronously, so two callers cannot both start one) and
        return the stream of its updates, ending with ``turn_end``."""
        if self._turn is not None:
            raise RuntimeError("a turn is already running; use enqueue()")
        blocks: list[ContentBlock] = (
            [TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        )
        turn = _Turn(turn_id or uuid.uuid4().hex[:12])
        self._turn = turn
        turn.task = asyncio.get_running_loop().create_task(self._run(turn, blocks))
        return TurnStream(turn)

    async def submit(
        self, prompt: str | Sequence[ContentBlock], *, turn_id: str | None = None
    ) -> AsyncIterator[SessionUpdate]:
        """Run one turn; yields every update, ending with ``turn_end``."""
        stream = self.start(prompt, turn_id=turn_id)
        try:
            async for update in stream:
                yield update
        finally:
            await stream.aclose()

    async def run(self, prompt: str | Sequence[ContentBlock]) -> TurnResult:
        """Run a turn, discarding updates; for callers that only want the result."""
        async for _ in self.submit(prompt):
            pass
        assert self.last_result is not None
        return self.last_result

    def cancel(self) -> bool:
        """Stop the running turn (it ends as ``aborted`` with a consistent history)."""
        turn = self._turn
        if turn is None or turn.task is None or turn.task.done():
            return False
        turn.task.cancel()
        return True

    async def enqueue(self, prompt: Sequence[ContentBlock]) -> asyncio.Future[TurnResult]:
        """A prompt sent while a turn runs: injected at the next boundary; the future
        resolves when the turn that consumed it ends."""
        message = await prompt_to_message(prompt, self.editor)
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        self._inbox.append(_Queued(message, list(prompt), future))
        return future

    def set_mode(self, mode: Mode) -> None:
        self.state.mode = mode
        self._record(SystemRecord(session_id=self.session_id, subtype="mode", data={"mode": mode}))
        self._emit(ModeChange(mode=mode))

    async def close(self) -> None:
        self.cancel()
        if self._turn is not None and self._turn.task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._turn.task
        await self.tasks.shutdown()
        if self.transcript is not None:
            await self.transcript.close()

    # -- the turn ---------------------------------------------------------------------

    async def _run(self, turn: _Turn, blocks: list[ContentBlock]) -> None:
        self.meter.start_turn()
        loop = TurnLoop(self, turn.turn_id, self._emit)
        self._loop = loop
        terminal: Terminal
        try:
            message = await prompt_to_message(blocks, self.editor)
            verdict = await self.hooks.user_prompt_submit(prompt_text(blocks))
            if verdict.block_reason is not None:
                terminal = Terminal("hook_stopped", verdict.block_reason)
            else:
                if self.title is None:
                    self.title = _title_from(blocks)
                self._emit(UserMessage(content=blocks))
                await self._record_durable(
                    UserRecord(
                        session_id=self.session_id,
                        turn_id=turn.turn_id,
                        message=message,
                        content=blocks,
                    )
                )
                self.messages.append(message)
                if verdict.additional_context:
                    self.append_meta(
                        turn.turn_id,
                        Message(
                            role="user",
                            content=[TextBlock(text=_reminder(verdict.additional_context))],
                        ),
                        "hook_context",
                    )
                terminal = await loop.run()
        except asyncio.CancelledError:
            await loop.abort()
            terminal = Terminal("aborted", "cancelled by the user")
        except Exception as e:  # a bug must end the turn visibly, not hang the editor
            log.exception("turn %s crashed", turn.turn_id)
            terminal = Terminal("model_error", f"internal error: {type(e).__name__}: {e}")
        await self._finish(turn, terminal)

    async def _finish(self, turn: _Turn, terminal: Terminal) -> None:
        self.turns += 1
        calls = self._loop.model_calls if self._loop is not None else 0
        result = TurnResult(turn.turn_id, terminal, self.meter.turn, calls)
        self.last_result = result
        self._record(
            SystemRecord(
                session_id=self.session_id,
                turn_id=turn.turn_id,
                subtype="turn_end",
                data={"reason": terminal.reason, "message": terminal.message},
            )
        )
        self._record(self._meta())
        if self.transcript is not None:
            with contextlib.suppress(Exception):
                await self.transcript.flush()
        turn.queue.put_nowait(TurnEnd(stop_reason=terminal.stop_reason, error=terminal.error))
        turn.queue.put_nowait(None)
        for fut in turn.waiters:
            if not fut.done():
                fut.set_result(result)
        # Prompts that arrived too late for this turn's last boundary are given back.
        for queued in self._inbox:
            if not queued.future.done():
                queued.future.set_result(result)
        self._inbox.clear()
        self._turn = None
        self._loop = None

    # -- history (called by the loop) ------------------------------------------------

    def append_assistant(
        self, turn_id: str, message: Message, completed: Completed | None = None
    ) -> None:
        self.messages.append(message)
        usage = None
        if completed is not None:
            u = completed.usage
            usage = Usage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_read_tokens=u.cache_read_tokens,
                cache_creation_tokens=u.cache_creation_tokens,
            )
        self._record(
            AssistantRecord(
                session_id=self.session_id,
                turn_id=turn_id,
                message=message,
                model=self.provider.model,
                stop_reason=completed.stop_reason if completed else None,
                usage=usage,
            )
        )

    def append_tool_results(
        self, turn_id: str, assistant: Message, outcomes: list[ToolOutcome]
    ) -> None:
        by_id = {o.block.tool_use_id: o.block for o in outcomes}
        blocks = [by_id.get(u.id) or self.interrupted_result(u.id) for u in assistant.tool_uses]
        self.append_tool_result_blocks(turn_id, blocks)

    def append_tool_result_blocks(self, turn_id: str, blocks: list[ToolResultBlock]) -> None:
        message = Message(role="user", content=list(blocks))
        self.messages.append(message)
        self._record(ToolResultRecord(session_id=self.session_id, turn_id=turn_id, message=message))

    def append_meta(self, turn_id: str, message: Message, kind: str) -> None:
        self.messages.append(message)
        self._record(
            AttachmentRecord(
                session_id=self.session_id, turn_id=turn_id, message=message, attachment=kind
            )
        )

    def interrupted_result(self, tool_use_id: str) -> ToolResultBlock:
        return tool_result(tool_use_id, INTERRUPTED_TOOL_RESULT, is_error=True)

    async def drain_inbox(self, turn_id: str) -> int:
        """Turn boundary: inject attachments (diagnostics, notices), task notifications
        and queued user prompts (last, so the user's words are nearest)."""
        count = 0
        for source in self.attachment_sources:
            for note in await source():
                self.append_meta(turn_id, note, "attachment")
                count += 1
        for note in self._notifications:
            self.append_meta(turn_id, note, "task_notification")
            count += 1
        self._notifications.clear()
        turn = self._turn
        for queued in self._inbox:
            self.messages.append(queued.message)
            self._emit(UserMessage(content=queued.content))
            self._record(
                UserRecord(
                    session_id=self.session_id,
                    turn_id=turn_id,
                    message=queued.message,
                    content=queued.content,
                )
            )
            if turn is not None:
                turn.waiters.append(queued.future)
            count += 1
        self._inbox.clear()
        return count

    def record_transition(self, turn_id: str, step: Transition) -> None:
        if step.kind != "next_turn":
            self._record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=turn_id,
                    subtype="transition",
                    data={"kind": step.kind},
                )
            )

    # -- tools ------------------------------------------------------------------------

    def _tool_context(self, tool_use_id: str) -> ToolContext:
        return ToolContext(
            session_id=self.session_id,
            tool_use_id=tool_use_id,
            cwd=self.cwd,
            editor=self.editor,
            state=self.state,
            config=self.tool_config,
            tasks=self.tasks,
            emit=self._emit,
        )

    def _remember_rule(self, kind: Literal["allow", "deny"], rule: str) -> None:
        parsed = Rule.parse(rule)
        (self.rules.allow if kind == "allow" else self.rules.deny).append(parsed)
        if self._persist_rule is not None:
            self._persist_rule(kind, rule)

    def _parse(self, use: ToolUseBlock) -> tuple[Tool[Any], Any] | None:
        tool = self._tools.get(use.name)
        if tool is None or use.truncated:
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
            tool = self._tools.get(use.name)
            return use.name, tool.kind if tool else "other", []
        tool, data = parsed
        try:
            return tool.title(data), tool.kind, tool.locations(data, self._tool_context(use.id))
        except Exception:
            return use.name, tool.kind, []

    # -- updates and records ------------------------------------------------------------

    def _emit(self, update: SessionUpdate) -> None:
        if isinstance(update, Plan):
            self._record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=self.current_turn_id,
                    subtype="plan",
                    data={"entries": [e.model_dump(mode="json") for e in update.entries]},
                )
            )
        if self._turn is not None:
            self._turn.queue.put_nowait(update)
        elif self.on_idle_update is not None:
            self.on_idle_update(update)

    def _task_changed(self, task: Task) -> None:
        status = "running" if task.status in ("pending", "running") else task.status
        self._emit(
            TaskUpdate(
                task_id=task.id,
                tool_call_id=task.tool_use_id,
                status=status,  # type: ignore[arg-type]
                description=task.description,
                summary=task.summary or None,
            )
        )
        if task.finished:
            self._notifications.append(_task_notification(task))

    def _record(self, record: Any) -> None:
        if self.transcript is not None:
            self.transcript.append(record)

    async def _record_durable(self, record: Any) -> None:
        if self.transcript is not None:
            await self.transcript.append_durable(record)

    def _meta(self) -> MetaRecord:
        return MetaRecord(
            session_id=self.session_id,
            title=self.title,
            workspace=str(self.cwd),
            created_at=self.created_at,
            model=self.provider.model,
            mode=self.state.mode,
            turns=self.turns,
        )


def _reminder(text: str) -> str:
    return f"<system-reminder>\n{text}\n</system-reminder>"


def _title_from(blocks: Sequence[ContentBlock]) -> str:
    text = " ".join(prompt_text(blocks).split())
    return (text[:60] + "…") if len(text) > 60 else (text or "(attachment)")


def _task_notification(task: Task) -> Message:
    result = task.result[-4000:] if task.result else ""
    body = (
        "<task-notification>\n"
        f"<task-id>{task.id}</task-id>\n"
        f"<tool-use-id>{task.tool_use_id or ''}</tool-use-id>\n"
        f"<status>{task.status}</status>\n"
        f"<summary>{task.description}: {task.summary}</summary>\n"
        f"<result>{result}</result>\n"
        f"<output-file>{task.output_path}</output-file>\n"
        "</task-notification>"
    )
    return Message(role="user", content=[TextBlock(text=body)])
