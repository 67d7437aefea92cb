"""QueryEngine: one per conversation. ``submit`` runs a turn and yields its updates.

The engine composes its parts, each built here with what it needs: the ``History``
(messages and the transcript writer), the ``Tooling`` (tool pool, call contexts, rules),
the ``TaskInbox`` (background-task notifications), the ``Compactor`` (working on the
engine's narrow ``Conversation`` view) and the ``BoundaryContext`` (memory, changed
files). A turn runs as its own asyncio task feeding a queue, driven by a ``TurnLoop``
over those parts, so ``cancel`` can stop it at any await (stream, tool, permission
question) and the history is closed consistently before ``turn_end`` is yielded.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from tether.agents.definitions import AgentDefinition, load_definitions
from tether.agents.tool import make_agent_tool
from tether.context.compaction import Compactor
from tether.context.reattach import Essentials
from tether.core.hooks import Hooks, NoHooks
from tether.core.messages import Message, TextBlock, ToolUseBlock
from tether.editor.port import Editor
from tether.engine.background import TaskInbox
from tether.engine.boundary import Boundary
from tether.engine.context import ContextAssembler
from tether.engine.history import History
from tether.engine.loop import TurnLoop, TurnParts
from tether.engine.prompt_input import prompt_text, prompt_to_message, well_formed_blocks
from tether.engine.subagents import EngineSpawner
from tether.engine.tooling import PersistRule, Tooling
from tether.engine.transitions import Terminal
from tether.engine.turns import (
    AttachmentSource,
    EngineConfig,
    EngineEvents,
    NoEvents,
    PromptNotes,
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
    Location,
    Mode,
    ModeChange,
    Notice,
    SessionUpdate,
    ToolKind,
    TurnEnd,
    Usage,
    UserMessage,
)
from tether.providers.base import Provider, SystemBlock, TokenUsage, ToolSpec
from tether.tasks.registry import TaskRegistry
from tether.tools.base import Tool
from tether.tools.context import SessionRunState, ToolConfig, ToolContext
from tether.tools.pool import ToolPool
from tether.transcript.records import (
    MetaRecord,
    Record,
    now_iso,
)
from tether.transcript.writer import TranscriptWriter

__all__ = ["EngineConfig", "QueryEngine", "TurnResult", "TurnStream"]

log = logging.getLogger(__name__)


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
        remember_rule: PersistRule | None = None,
        agent_definitions: dict[str, AgentDefinition] | None = None,
        events: EngineEvents | None = None,
        attachment_sources: Sequence[AttachmentSource] = (),
        parent_tool_use_id: str | None = None,
        parent_meter: UsageMeter | None = None,
        refresh_settings: Callable[[], None] | None = None,
        prompt_notes: PromptNotes | None = None,
        provider_for: Callable[[str], Provider] | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.provider = provider
        self.provider_for = provider_for
        """Builds the provider of a model named by an agent's definition; None: agents use
        this engine's provider whatever they name."""
        self.editor = editor
        self.rules = rules or RuleSet()
        self.hooks: Hooks = hooks or NoHooks()
        self.config = config or EngineConfig()
        self.tool_config = tool_config or ToolConfig()
        self.state = state or SessionRunState()
        self.assembler = assembler or ContextAssembler(cwd=cwd, model=provider.model)
        self.meter = UsageMeter(provider.model, provider.context_window, parent_meter)
        self.title = title
        self.turns = 0
        self.created_at = now_iso()
        self.events: EngineEvents = events or NoEvents()
        self.parent_tool_use_id = parent_tool_use_id
        """For a subagent: the Agent tool call it works for."""
        self.history = History(session_id, history or (), transcript, on_reset=self._reset)
        self.tasks = tasks or TaskRegistry(
            Path(tempfile.gettempdir()) / "tether-tasks" / session_id
        )
        self.inbox = TaskInbox(
            session_id,
            record=self.history.record,
            emit=self._emit,
            events=self.events,
            busy=lambda: self.busy,
        )
        self.tasks.set_listener(self.inbox.task_changed)
        self.boundary = Boundary(
            cwd=cwd,
            history=self.history,
            tasks=self.inbox,
            files=self.state.files,
            editor=editor,
            emit=self._emit,
            sources=attachment_sources,
            prompt_notes=prompt_notes,
        )
        self.tools = ToolPool(tools, removed=self.rules.removes_tool)
        results_dir = self.tasks.output_dir.parent / "tool-results"
        self.tooling = Tooling(
            session_id=session_id,
            cwd=cwd,
            editor=editor,
            state=self.state,
            config=self.tool_config,
            tasks=self.tasks,
            pool=self.tools,
            rules=self.rules,
            emit=self._emit,
            persist_rule=remember_rule,
            results_dir=results_dir,
        )
        self.agent_definitions = (
            agent_definitions if agent_definitions is not None else load_definitions(cwd)
        )
        if "Agent" not in self.tools and self.state.agent_depth < self.config.max_agent_depth:
            spawner = EngineSpawner(self, make_engine=QueryEngine)
            self.tools.add(make_agent_tool(spawner))
        self.tool_runtime = ToolRuntime(
            session_id=session_id,
            tools=self.tools,
            rules=self.rules,
            hooks=self.hooks,
            make_context=self.tool_context,
            remember_rule=self.tooling.remember_rule,
            refresh=refresh_settings or (lambda: None),
        )
        self.compactor = Compactor(
            self.config.compaction,
            results_dir,
            essentials=Essentials(editor, self.state, self.tasks),
        )
        self._turn: Turn | None = None
        self._loop: TurnLoop | None = None
        self.last_result: TurnResult | None = None

    # -- the parts' faces -------------------------------------------------------------

    @property
    def attachment_sources(self) -> list[AttachmentSource]:
        return self.boundary.sources

    def _reset(self) -> None:
        self.boundary.reset()

    @property
    def messages(self) -> list[Message]:
        return self.history.messages

    @property
    def transcript(self) -> TranscriptWriter | None:
        return self.history.transcript

    @property
    def notifications(self) -> list[Message]:
        """Finished-task notifications waiting for a turn boundary."""
        return self.inbox.pending

    def record(self, record: Record) -> None:
        self.history.record(record)

    def tool_context(self, tool_use_id: str) -> ToolContext:
        return self.tooling.tool_context(tool_use_id)

    def describe_call(self, use: ToolUseBlock) -> tuple[str, ToolKind, list[Location]]:
        return self.tooling.describe_call(use)

    async def save_meta(self) -> None:
        """Write the tail metadata now (title, turns, usage) and make it durable."""
        self.history.record(self.meta())
        await self.history.flush()

    def meta(self) -> MetaRecord:
        return MetaRecord(
            session_id=self.session_id,
            title=self.title,
            workspace=str(self.cwd),
            created_at=self.created_at,
            model=self.provider.model,
            mode=self.state.mode,
            turns=self.turns,
            usage=self.meter.session,
        )

    def replace_conversation(self, messages: list[Message], last_uuid: str | None) -> None:
        """Continue from an earlier point (rewind): these messages, and the transcript
        branching off after ``last_uuid``."""
        self.history.rewind(messages, last_uuid)

    # -- the compactor's view (``Conversation``) ---------------------------------------

    def request_prefix(self) -> tuple[list[SystemBlock], list[ToolSpec]]:
        return self.assembler.system(), self.tool_specs()

    def discovered_tools(self) -> list[str]:
        return sorted(self.tools.discovered)

    def replace_history(self, messages: list[Message]) -> None:
        self.history.replace(messages)

    def count_usage(self, usage: TokenUsage) -> None:
        self.meter.add(usage)

    # -- public API -----------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._turn is not None

    @property
    def queued_prompts(self) -> int:
        """Prompts waiting for the running turn's next boundary."""
        return len(self.boundary.queued)

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

    async def enqueue(
        self, prompt: Sequence[ContentBlock], *, with_tools_only: bool = False
    ) -> asyncio.Future[TurnResult | None]:
        """A prompt sent while a turn runs: injected at the next boundary; the future
        resolves with the result of the turn that consumed it, or with ``None`` when no
        turn did (it came after the last boundary): the caller runs it as a turn."""
        # It passes the UserPromptSubmit hooks as a prompt that starts a turn does.
        verdict = await self.hooks.user_prompt_submit(prompt_text(prompt))
        turn = self._turn
        if verdict.block_reason is not None and turn is not None:
            self._emit(
                Notice(
                    level="warning",
                    message=f"A UserPromptSubmit hook refused a prompt sent during the turn: "
                    f"{verdict.block_reason}",
                )
            )
            refused = TurnResult(
                turn.turn_id, Terminal("hook_stopped", verdict.block_reason), Usage()
            )
            future: asyncio.Future[TurnResult | None] = asyncio.get_running_loop().create_future()
            future.set_result(refused)
            return future
        running: Callable[[], bool] = lambda: self._turn is not None  # noqa: E731
        return await self.boundary.enqueue(
            prompt, running, verdict.additional_context, with_tools_only=with_tools_only
        )

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
        await self.assembler.prepare()  # off the loop; before the check, which must not wait
        if self._turn is not None:
            raise SessionError("cannot compact while a turn is running")
        update = await self.compactor.compact(self, None, "manual", self._emit, instructions)
        if self.transcript is not None:
            await self.transcript.flush()
        return update

    async def close(self) -> None:
        self.cancel()
        if self._turn is not None and self._turn.task is not None:
            await asyncio.wait([self._turn.task])  # a cancel of this close still stops it
        await self.tasks.shutdown()
        self.boundary.close()
        if self.transcript is not None:
            await self.transcript.close()

    # -- the turn ---------------------------------------------------------------------

    async def _run(self, turn: Turn, blocks: list[ContentBlock] | None) -> None:
        self.meter.start_turn()
        loop = TurnLoop(self._parts(), turn.turn_id, self._emit)
        self._loop = loop
        terminal: Terminal
        try:
            stopped = await self._accept_prompt(turn.turn_id, blocks)
            terminal = stopped if stopped is not None else await loop.run()
        except asyncio.CancelledError:
            terminal = Terminal("aborted", "cancelled by the user")
            try:
                await loop.abort()
            except Exception:
                log.exception("turn %s: closing the history after a cancel failed", turn.turn_id)
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
            self.boundary.notifications(turn_id)
            return None
        blocks = well_formed_blocks(blocks)  # nothing the API would refuse, nor the disk
        message = await prompt_to_message(blocks, self.editor)
        verdict = await self.hooks.user_prompt_submit(prompt_text(blocks))
        if verdict.block_reason is not None:
            return Terminal("hook_stopped", verdict.block_reason)
        if self.title is None:
            self.title = _title_from(blocks)
        self._emit(UserMessage(content=blocks))
        await self.history.append_user(turn_id, message, blocks, durable=True)
        await self.boundary.notes(turn_id)
        self.boundary.recall(turn_id, prompt_text(blocks))
        if verdict.additional_context:
            note = f"<system-reminder>\n{verdict.additional_context}\n</system-reminder>"
            self.history.append_meta(
                turn_id, Message(role="user", content=[TextBlock(text=note)]), "hook_context"
            )
        return None

    async def _finish(self, turn: Turn, terminal: Terminal) -> None:
        calls = self._loop.model_calls if self._loop is not None else 0
        try:
            terminal = await self._record_end(turn, terminal)
        except Exception as e:
            log.exception("turn %s: recording its end failed", turn.turn_id)
            terminal = Terminal("model_error", f"internal error: {type(e).__name__}: {e}")
        finally:
            # Whatever failed above, the turn ends: its caller hears, the next one may run.
            result = TurnResult(turn.turn_id, terminal, self.meter.turn, calls)
            self.last_result = result
            turn.queue.put_nowait(TurnEnd(stop_reason=terminal.stop_reason, error=terminal.error))
            turn.queue.put_nowait(None)
            for fut in turn.waiters:
                if not fut.done():
                    fut.set_result(result)
            self.boundary.release()
            self._turn = None
            self._loop = None
        if self.notifications:
            self.events.wake()

    async def _record_end(self, turn: Turn, terminal: Terminal) -> Terminal:
        """The turn's end on record (counted, its file state, flushed); the terminal to
        report, which says so when the turn could not be saved."""
        # A turn the model never answered (no credentials, unreachable) is not one the user
        # had: the sessions list counts exchanges, not attempts.
        if terminal.reason != "model_error" or self.meter.turn.output_tokens > 0:
            self.turns += 1
        files = None
        if self.state.files.changed:
            self.state.files.changed = False
            files = self.state.files.snapshot()
        self.history.record_turn_end(
            turn.turn_id, terminal.reason, terminal.message, files, self.meta()
        )
        if self.transcript is not None:
            try:
                await self.transcript.flush()
            except TranscriptWriteError as e:  # the turn is not saved: say so, never "done"
                terminal = Terminal("transcript_error", str(e))
        for notice in self.hooks.drain_notices():  # the Stop hook's, and any left
            self._emit(Notice(level=notice.level, message=notice.message))
        return terminal

    async def drain_inbox(self, turn_id: str, ending: bool = False) -> int:
        """Turn boundary: what arrived meanwhile joins the conversation (``Boundary``)."""
        waiters = self._turn.waiters if self._turn else []
        return await self.boundary.drain(turn_id, waiters, ending=ending)

    def _parts(self) -> TurnParts:
        return TurnParts(
            history=self.history,
            tooling=self.tooling,
            runtime=self.tool_runtime,
            compactor=self.compactor,
            conversation=self,
            assembler=self.assembler,
            meter=self.meter,
            hooks=self.hooks,
            config=self.config,
            provider=lambda: self.provider,
            tool_specs=self.tool_specs,
            drain=self.drain_inbox,
        )

    # -- updates ----------------------------------------------------------------------

    def _emit(self, update: SessionUpdate) -> None:
        self.history.record_state(self.current_turn_id, update)
        if self._turn is not None:
            self._turn.queue.put_nowait(update)
        else:
            self.events.idle_update(update)


def _title_from(blocks: Sequence[ContentBlock]) -> str:
    text = " ".join(prompt_text(blocks).split())
    return (text[:60] + "…") if len(text) > 60 else (text or "(attachment)")
