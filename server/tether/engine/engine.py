"""QueryEngine: one per conversation. ``submit`` runs a turn and yields its updates.

The engine owns the conversation (``messages``), the run state tools share, the usage
meter and the transcript writer. A turn runs as its own asyncio task feeding a queue, so
``cancel`` can stop it at any await (stream, tool, permission question) and the history is
closed consistently before ``turn_end`` is yielded. History recording, tool plumbing and
background-task notifications live in the mixins of ``history``, ``tooling`` and
``background``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from tether.agents.definitions import AgentDefinition, load_definitions
from tether.context.compaction import CompactionSettings, Compactor
from tether.context.memory import MAX_RECALLED, Bm25Recaller, Recaller, memory_attachment
from tether.context.recall import memory_entries
from tether.context.watcher import ChangeWatcher, change_notice
from tether.core.hooks import Hooks, NoHooks
from tether.core.messages import Message, TextBlock
from tether.editor.port import Editor
from tether.engine.background import BackgroundMixin
from tether.engine.context import ContextAssembler
from tether.engine.history import HistoryMixin
from tether.engine.loop import TurnLoop
from tether.engine.prompt_input import prompt_text, prompt_to_message
from tether.engine.tooling import ToolingMixin
from tether.engine.transitions import Terminal
from tether.engine.turns import (
    AttachmentSource,
    EngineConfig,
    EngineEvents,
    NoEvents,
    Queued,
    Turn,
    TurnResult,
    TurnStream,
)
from tether.engine.usage import UsageMeter
from tether.errors import SessionError, TranscriptWriteError
from tether.orchestration.pipeline import ToolRuntime
from tether.permissions.policy import RuleSet
from tether.protocol.content import ContentBlock, TextContent
from tether.protocol.updates import (
    Compaction,
    Mode,
    ModeChange,
    Notice,
    Plan,
    SessionUpdate,
    TurnEnd,
    UserMessage,
)
from tether.providers.base import Provider, ToolSpec
from tether.tasks.registry import TaskRegistry
from tether.tools.base import Tool
from tether.tools.context import SessionRunState, ToolConfig
from tether.tools.pool import ToolPool
from tether.transcript.records import SystemRecord, UserRecord, now_iso
from tether.transcript.writer import TranscriptWriter

__all__ = ["EngineConfig", "QueryEngine", "TurnResult", "TurnStream"]

log = logging.getLogger(__name__)


class QueryEngine(HistoryMixin, ToolingMixin, BackgroundMixin):
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
        remember_rule: Callable[[Literal["allow", "deny"], str], None] | None = None,
        agent_definitions: dict[str, AgentDefinition] | None = None,
        events: EngineEvents | None = None,
        attachment_sources: Sequence[AttachmentSource] = (),
        parent_tool_use_id: str | None = None,
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
        self.created_at = now_iso()
        self.tasks = tasks or TaskRegistry(
            Path(tempfile.gettempdir()) / "tether-tasks" / session_id
        )
        self.tasks.set_listener(self.task_changed)
        self.tools = ToolPool(tools, removed=self.rules.removes_tool)
        self.agent_definitions = (
            agent_definitions if agent_definitions is not None else load_definitions(cwd)
        )
        self.parent_tool_use_id = parent_tool_use_id
        """For a subagent: the Agent tool call it works for."""
        self.events: EngineEvents = events or NoEvents()
        if "Agent" not in self.tools and self.state.agent_depth < self.config.max_agent_depth:
            from tether.agents.tool import make_agent_tool

            self.tools.add(make_agent_tool(self))
        self._persist_rule = remember_rule
        self.tool_runtime = ToolRuntime(
            session_id=session_id,
            tools=self.tools,
            rules=self.rules,
            hooks=self.hooks,
            make_context=self.tool_context,
            remember_rule=self.remember_rule,
        )
        self._turn: Turn | None = None
        self._loop: TurnLoop | None = None
        self._inbox: list[Queued] = []
        self.notifications: list[Message] = []
        """Finished-task notifications waiting for a turn boundary."""
        self.last_result: TurnResult | None = None
        self.compactor = Compactor(
            CompactionSettings(), self.tasks.output_dir.parent / "tool-results"
        )
        self.recaller: Recaller = Bm25Recaller()
        self.watcher = ChangeWatcher()
        self._recalled: set[Path] = set()
        self.attachment_sources: list[AttachmentSource] = list(attachment_sources)
        """Urgent attachments (new diagnostics): they make the model go on at a turn's end."""

    # -- public API -----------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._turn is not None

    @property
    def queued_prompts(self) -> int:
        """Prompts waiting for the running turn's next boundary."""
        return len(self._inbox)

    @property
    def current_turn_id(self) -> str | None:
        return self._turn.turn_id if self._turn else None

    def tool_specs(self) -> list[ToolSpec]:
        """What the model is offered now: core tools and discovered deferred ones."""
        return self.tools.specs(self.messages)

    def start(
        self, prompt: str | Sequence[ContentBlock] | None, *, turn_id: str | None = None
    ) -> TurnStream:
        """Start a turn now (synchronously, so two callers cannot both start one) and return
        the stream of its updates, ending with ``turn_end``. ``prompt=None`` starts a turn
        that answers the pending task notifications."""
        if self._turn is not None:
            raise RuntimeError("a turn is already running; use enqueue()")
        blocks: list[ContentBlock] | None = (
            [TextContent(text=prompt)]
            if isinstance(prompt, str)
            else None
            if prompt is None
            else list(prompt)
        )
        turn = Turn(turn_id or uuid.uuid4().hex[:12])
        self._turn = turn
        turn.task = asyncio.get_running_loop().create_task(self._run(turn, blocks))
        return TurnStream(turn)

    async def submit(
        self, prompt: str | Sequence[ContentBlock] | None, *, turn_id: str | None = None
    ) -> AsyncIterator[SessionUpdate]:
        """Run one turn; yields every update, ending with ``turn_end``."""
        stream = self.start(prompt, turn_id=turn_id)
        try:
            async for update in stream:
                yield update
        finally:
            await stream.aclose()

    async def run(self, prompt: str | Sequence[ContentBlock] | None) -> TurnResult:
        """Run a turn, discarding updates; for callers that only want the result."""
        async for _ in self.submit(prompt):
            pass
        assert self.last_result is not None
        return self.last_result

    def cancel(self) -> bool:
        """Stop the running turn (it ends as ``aborted`` with a consistent history)."""
        turn = self._turn
        if turn is None or turn.task is None or turn.task.done() or turn.cancelling:
            return False
        # Once: a second cancel would interrupt the clean-up that closes the history.
        turn.cancelling = True
        turn.task.cancel()
        return True

    async def enqueue(self, prompt: Sequence[ContentBlock]) -> asyncio.Future[TurnResult | None]:
        """A prompt sent while a turn runs: injected at the next boundary; the future
        resolves with the result of the turn that consumed it, or with ``None`` when no
        turn did (it came after the last boundary): the caller runs it as a turn."""
        message = await prompt_to_message(prompt, self.editor)
        future: asyncio.Future[TurnResult | None] = asyncio.get_running_loop().create_future()
        if self._turn is None:  # the turn ended while the prompt was being read
            future.set_result(None)
        else:
            self._inbox.append(Queued(message, list(prompt), future))
        return future

    def set_provider(self, provider: Provider) -> None:
        """Use another model from the next request on (the system prompt names it)."""
        self.provider = provider
        self.assembler.model = provider.model
        self.assembler.invalidate()
        self.meter.model = provider.model
        self.meter.context_window = provider.context_window

    def set_mode(self, mode: Mode) -> None:
        self.state.mode = mode
        self._emit(ModeChange(mode=mode))

    def note(self, text: str, level: Literal["info", "warning", "error"] = "warning") -> None:
        self._emit(Notice(level=level, message=text))

    async def compact(self, instructions: str = "") -> Compaction:
        """Manual compaction (``/compact``, ``tether/compact``) between turns."""
        if self._turn is not None:
            raise SessionError("cannot compact while a turn is running")
        update = await self.compactor.compact(self, None, "manual", self._emit, instructions)
        if self.transcript is not None:
            await self.transcript.flush()
        return update

    async def close(self) -> None:
        self.cancel()
        if self._turn is not None and self._turn.task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._turn.task
        await self.tasks.shutdown()
        self.watcher.close()
        if self.transcript is not None:
            await self.transcript.close()

    # -- the turn ---------------------------------------------------------------------

    async def _run(self, turn: Turn, blocks: list[ContentBlock] | None) -> None:
        self.meter.start_turn()
        loop = TurnLoop(self, turn.turn_id, self._emit)
        self._loop = loop
        terminal: Terminal
        try:
            stopped = await self._accept_prompt(turn.turn_id, blocks)
            terminal = stopped if stopped is not None else await loop.run()
        except asyncio.CancelledError:
            await loop.abort()
            terminal = Terminal("aborted", "cancelled by the user")
        except TranscriptWriteError as e:
            terminal = Terminal("transcript_error", str(e))
        except Exception as e:  # a bug must end the turn visibly, not hang the editor
            log.exception("turn %s crashed", turn.turn_id)
            terminal = Terminal("model_error", f"internal error: {type(e).__name__}: {e}")
        await self._finish(turn, terminal)

    async def _accept_prompt(
        self, turn_id: str, blocks: list[ContentBlock] | None
    ) -> Terminal | None:
        """Put the user's prompt (or pending notifications) into the history; it is on disk
        before the model is called. A UserPromptSubmit hook may refuse it."""
        if blocks is None:
            self._inject_notifications(turn_id)
            return None
        message = await prompt_to_message(blocks, self.editor)
        verdict = await self.hooks.user_prompt_submit(prompt_text(blocks))
        if verdict.block_reason is not None:
            return Terminal("hook_stopped", verdict.block_reason)
        if self.title is None:
            self.title = _title_from(blocks)
        self._emit(UserMessage(content=blocks))
        await self.record_durable(
            UserRecord(session_id=self.session_id, turn_id=turn_id, message=message, content=blocks)
        )
        self.messages.append(message)
        self._recall_memory(turn_id, prompt_text(blocks))
        if verdict.additional_context:
            note = f"<system-reminder>\n{verdict.additional_context}\n</system-reminder>"
            self.append_meta(
                turn_id, Message(role="user", content=[TextBlock(text=note)]), "hook_context"
            )
        return None

    async def _finish(self, turn: Turn, terminal: Terminal) -> None:
        self.turns += 1
        calls = self._loop.model_calls if self._loop is not None else 0
        self.record_turn_end(turn.turn_id, terminal.reason, terminal.message)
        if self.transcript is not None:
            try:
                await self.transcript.flush()
            except TranscriptWriteError as e:  # the turn is not saved: say so, never "done"
                terminal = Terminal("transcript_error", str(e))
        result = TurnResult(turn.turn_id, terminal, self.meter.turn, calls)
        self.last_result = result
        for notice in self.hooks.drain_notices():  # the Stop hook's, and any left
            self._emit(Notice(level=notice.level, message=notice.message))
        turn.queue.put_nowait(TurnEnd(stop_reason=terminal.stop_reason, error=terminal.error))
        turn.queue.put_nowait(None)
        for fut in turn.waiters:
            if not fut.done():
                fut.set_result(result)
        # Prompts that arrived too late for this turn's last boundary are given back.
        for queued in self._inbox:
            if not queued.future.done():
                queued.future.set_result(None)
        self._inbox.clear()
        self._turn = None
        self._loop = None
        if self.notifications:
            self.events.wake()

    async def drain_inbox(self, turn_id: str) -> int:
        """Turn boundary: inject attachments (diagnostics, notices), task notifications
        and queued user prompts (last: the user's words are nearest and win attention)."""
        count = 0
        # Files changed by someone else: worth knowing, not worth another model call.
        for note in await self._changed_files():
            self.append_meta(turn_id, note, "file_changed")
        for source in self.attachment_sources:
            for note in await source():
                self.append_meta(turn_id, note, "attachment")
                count += 1
        count += self._inject_notifications(turn_id)
        turn = self._turn
        for queued in self._inbox:
            self.messages.append(queued.message)
            self._emit(UserMessage(content=queued.content))
            self.record(
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

    def _inject_notifications(self, turn_id: str) -> int:
        pending, self.notifications = self.notifications, []
        for note in pending:
            self.append_meta(turn_id, note, "task_notification")
        return len(pending)

    # -- context ----------------------------------------------------------------------

    def _recall_memory(self, turn_id: str, query: str) -> None:
        entries = [e for e in memory_entries(self.cwd) if e.path not in self._recalled]
        chosen = self.recaller.recall(query, entries, MAX_RECALLED)
        text = memory_attachment(chosen)
        if text:
            self._recalled.update(e.path for e in chosen)
            self.append_meta(
                turn_id, Message(role="user", content=[TextBlock(text=text)]), "memory"
            )

    async def _changed_files(self) -> list[Message]:
        files = self.state.files
        self.watcher.follow(files.paths())
        changed = await asyncio.to_thread(self.watcher.changed_since_read, files)
        return [change_notice(changed)] if changed else []

    # -- updates ----------------------------------------------------------------------

    def _emit(self, update: SessionUpdate) -> None:
        if isinstance(update, ModeChange):
            # Every mode change (a front door's, or a tool's like ExitPlanMode) is on record,
            # so a resumed session is in the mode it was left in.
            self.record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=self.current_turn_id,
                    subtype="mode",
                    data={"mode": update.mode},
                )
            )
        if isinstance(update, Plan):
            self.record(
                SystemRecord(
                    session_id=self.session_id,
                    turn_id=self.current_turn_id,
                    subtype="plan",
                    data={"entries": [e.model_dump(mode="json") for e in update.entries]},
                )
            )
        if self._turn is not None:
            self._turn.queue.put_nowait(update)
        else:
            self.events.idle_update(update)


def _title_from(blocks: Sequence[ContentBlock]) -> str:
    text = " ".join(prompt_text(blocks).split())
    return (text[:60] + "…") if len(text) > 60 else (text or "(attachment)")
