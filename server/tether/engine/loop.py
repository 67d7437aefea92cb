"""One turn of the query loop, phase by phase.

    assemble context -> call the model (streaming; safe tools start early) -> run tool
    batches -> drain queued input and notifications -> typed transition or terminal

Each iteration ends in a ``Step`` (engine/transitions.py). Cancellation can land anywhere;
``abort`` then closes the history so every ``tool_use`` has a ``tool_result``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from tether.context.compaction import Compactor, Conversation
from tether.core.hooks import Hooks
from tether.core.messages import (
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)
from tether.engine.context import ContextAssembler
from tether.engine.history import History, interrupted_result
from tether.engine.overflow import OverflowRecovery
from tether.engine.tooling import Tooling
from tether.engine.transitions import (
    InputInjected,
    MaxTokensContinue,
    MaxTokensEscalate,
    NextTurn,
    PauseTurnContinue,
    Step,
    StopHookContinue,
    Terminal,
)
from tether.engine.turns import EngineConfig
from tether.engine.usage import UsageMeter
from tether.errors import EmptyAnswerError, ModelError, PromptTooLongError
from tether.orchestration.executor import StreamingToolExecutor
from tether.orchestration.pipeline import ToolOutcome, ToolRuntime, run_tool_use
from tether.protocol.server_tools import server_tool_update
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Notice,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
)
from tether.providers.base import (
    Completed,
    ModelRequest,
    Provider,
    Retrying,
    ServerToolFinished,
    ServerToolStarted,
    StreamReset,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolSpec,
    ToolUseReady,
    Waiting,
)
from tether.transcript.payloads import ToolFinishedData, ToolStartedData
from tether.transcript.records import ProgressRecord

CONTINUE_PROMPT = (
    "Your previous reply was cut off at the output limit. Continue exactly where you "
    "stopped, without repeating anything."
)
INTERRUPTED_BY_USER = "[Request interrupted by user]"
MAX_PAUSES = 10
"""Paused server-side tool loops resumed in one turn before giving up."""


@dataclass(frozen=True)
class TurnParts:
    """What a turn works with: the engine's parts, passed explicitly."""

    history: History
    tooling: Tooling
    runtime: ToolRuntime
    compactor: Compactor
    conversation: Conversation
    """The compactor's view of the conversation."""
    assembler: ContextAssembler
    meter: UsageMeter
    hooks: Hooks
    config: EngineConfig
    provider: Callable[[], Provider]
    """The model to ask now (another may be chosen between turns)."""
    tool_specs: Callable[[], list[ToolSpec]]
    drain: Callable[[str, bool], Awaitable[int]]
    """Turn boundary: inject queued input and notifications; returns how many. The flag:
    the turn would end here (the model answered without tools)."""


class TurnLoop:
    """Runs one turn with ``parts``; updates go to ``emit``."""

    def __init__(
        self, parts: TurnParts, turn_id: str, emit: Callable[[SessionUpdate], None]
    ) -> None:
        self.parts = parts
        self.turn_id = turn_id
        self.emit = emit
        self.model_calls = 0
        self.continuations = 0
        self.stop_blocks = 0
        self.pauses = 0
        self._executor: StreamingToolExecutor | None = None
        self._partial: list[Block] = []
        self._partial_text = ""
        self._announced: set[str] = set()
        self.overflow = OverflowRecovery(parts.compactor, parts.conversation, parts.meter)
        self.escalated = False
        """The output limit was raised to the model's maximum after a cut-off reply."""

    async def run(self) -> Terminal:
        while True:
            step = await self.iterate()
            if isinstance(step, Terminal):
                return step
            self.parts.history.record_transition(self.turn_id, step)

    # -- one iteration ---------------------------------------------------------------

    async def iterate(self) -> Step:
        parts = self.parts
        history = parts.history
        cfg = parts.config
        if self.model_calls > 0:
            if cfg.max_turns is not None and self.model_calls >= cfg.max_turns:
                return Terminal("max_turns", f"stopped after {self.model_calls} model requests")
            if parts.meter.budget_exhausted(cfg.max_budget_usd):
                return Terminal(
                    "budget_exhausted",
                    f"the budget of ${cfg.max_budget_usd:.2f} is used up "
                    f"(${parts.meter.spent_usd() or 0:.4f} spent)",
                )
        provider = parts.provider()
        await provider.discover_window()
        # The system prompt runs git and reads files: made in a thread, before the size
        # estimates below need it (once per session; at once when made).
        await parts.assembler.prepare()
        await parts.compactor.before_request(parts.conversation, self.turn_id, self.emit)
        stop = await self.overflow.ensure_fit(self.turn_id, self.emit)
        self.hook_notices()
        if stop is not None:
            return stop
        request = parts.assembler.request(history.messages, parts.tool_specs())
        limits = provider.limits
        wanted = limits.max_output if self.escalated else limits.default_output
        request = replace(request, max_tokens=self.overflow.max_tokens(wanted))
        sent = parts.compactor.estimate(parts.conversation)
        size = parts.compactor.context_tokens(parts.conversation)
        self.model_calls += 1
        executor = self._new_executor()
        try:
            completed = await self.call_model(provider, request, executor)
        except PromptTooLongError as e:
            await executor.cancel()
            self.model_calls -= 1  # the refused request does not count as a model turn
            return await self.overflow.refused(e, self.turn_id, self.emit)
        except EmptyAnswerError as e:
            await executor.cancel()
            self.model_calls -= 1
            return await self.overflow.empty(e, self.turn_id, self.emit)
        except ModelError as e:
            await executor.cancel()
            return Terminal("model_error", str(e))

        self.overflow.accepted(size)
        assistant = completed.message
        if (
            completed.stop_reason == "max_tokens"
            and not self.escalated
            and limits.max_output > request.max_tokens
        ):
            self._escalate(limits.max_output)
        history.append_assistant(self.turn_id, assistant, provider.model, completed)
        counted = self.overflow.counted(sent, completed.usage, self.emit)
        if counted == "size":
            parts.compactor.observe(parts.conversation, completed.usage)
        elif counted == "cut":  # the server cut the prompt: its window is not what it said
            await provider.discover_window(again=True)
        self._partial, self._partial_text = [], ""
        # A server may have reported its window with this first response (discovery).
        parts.meter.context_window = parts.compactor.window(parts.conversation)
        self.emit(parts.meter.add(completed.usage))

        if assistant.tool_uses:
            outcomes = await executor.results()
            self._executor = None
            history.append_tool_results(self.turn_id, assistant, outcomes)
            self.hook_notices()
            await parts.drain(self.turn_id, False)
            stopped = next((o.stop_turn for o in outcomes if o.stop_turn), None)
            if stopped is not None:
                return Terminal("hook_stopped", stopped)
            return NextTurn()
        self._executor = None

        if completed.stop_reason == "max_tokens":
            if self.continuations >= cfg.max_tokens_continuations:
                return Terminal("max_tokens", "the reply kept reaching the output token limit")
            self.continuations += 1
            history.append_meta(self.turn_id, user_text(CONTINUE_PROMPT), "continuation")
            return MaxTokensContinue(self.continuations)
        if completed.stop_reason == "refusal":
            return Terminal("refusal", "the model declined to continue")
        if completed.stop_reason == "pause_turn":
            if self.pauses >= MAX_PAUSES:
                return Terminal("model_error", "the provider kept pausing its server-side tools")
            self.pauses += 1
            return PauseTurnContinue(self.pauses)
        injected = await parts.drain(self.turn_id, True)
        if injected:
            return InputInjected(injected)
        verdict = await parts.hooks.stop(
            stop_hook_active=self.stop_blocks > 0, last_message=assistant.text
        )
        if verdict.stop_turn is not None:
            return Terminal("hook_stopped", verdict.stop_turn)
        if verdict.block_reason is not None and self.stop_blocks < cfg.max_stop_hook_blocks:
            self.stop_blocks += 1
            note = f"A Stop hook asked you to keep going: {verdict.block_reason}"
            history.append_meta(self.turn_id, user_text(note), "stop_hook")
            return StopHookContinue(verdict.block_reason)
        return Terminal("completed")

    def _escalate(self, max_tokens: int) -> None:
        """The reply hit the default output limit: from the next request on, this turn asks
        for the model's full limit (once; then the continuation prompts take over). What
        was streamed stays: editors cannot take text back, so the model continues it."""
        self.escalated = True
        self.parts.history.record_transition(self.turn_id, MaxTokensEscalate(max_tokens))
        self.emit(
            Notice(
                level="info",
                message=f"The reply reached the output limit; continuing with up to "
                f"{max_tokens} output tokens",
            )
        )

    def hook_notices(self) -> None:
        """Hook ``systemMessage``s and hook failures reach the user as notices."""
        for notice in self.parts.hooks.drain_notices():
            self.emit(Notice(level=notice.level, message=notice.message))

    # -- model phase ------------------------------------------------------------------

    async def call_model(
        self, provider: Provider, request: ModelRequest, executor: StreamingToolExecutor
    ) -> Completed:
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                self._partial_text += event.text
                self.emit(AgentMessageChunk(text=event.text))
            elif isinstance(event, ThinkingDelta):
                self.emit(AgentThoughtChunk(text=event.text))
            elif isinstance(event, ThinkingReady):
                # Kept (signature and all) so a cancelled tool call still goes back with it.
                self._flush_partial_text()
                self._partial.append(event.block)
            elif isinstance(event, ServerToolStarted | ServerToolFinished):
                self._flush_partial_text()
                self.emit(server_tool_update(event.block))
            elif isinstance(event, ToolUseReady):
                self._flush_partial_text()
                self._partial.append(event.block)
                self._announce(event.block)
                executor.add(event.block)
            elif isinstance(event, Retrying):
                self.emit(
                    Notice(
                        level="warning",
                        message=f"Model request failed ({event.reason}); retry {event.attempt} "
                        f"in {event.delay_s:.1f}s",
                    )
                )
            elif isinstance(event, Waiting):
                self.emit(Notice(level="info", message=event.words, progress=True))
            elif isinstance(event, StreamReset):
                await executor.discard()
                for tool_id in self._announced:
                    self.emit(ToolCallUpdate(tool_call_id=tool_id, status="failed"))
                self._announced.clear()
                self._partial, self._partial_text = [], ""
                self.emit(
                    Notice(
                        level="warning",
                        message=f"The response stream broke ({event.reason}); retrying",
                    )
                )
            elif isinstance(event, Completed):
                executor.stream_ended()
                return event
        raise ModelError("the model stream ended without a final message")

    def _flush_partial_text(self) -> None:
        if self._partial_text:
            self._partial.append(TextBlock(text=self._partial_text))
            self._partial_text = ""

    def _announce(self, use: ToolUseBlock) -> None:
        title, kind, locations = self.parts.tooling.describe_call(use)
        self._announced.add(use.id)
        self.emit(
            ToolCall(
                tool_call_id=use.id,
                title=title,
                tool_kind=kind,
                tool_name=use.name,
                status="pending",
                raw_input=use.input,
                locations=locations or None,
            )
        )

    # -- tool phase -------------------------------------------------------------------

    def _new_executor(self) -> StreamingToolExecutor:
        self._executor = StreamingToolExecutor(
            self._run_one,
            self.parts.tooling.is_concurrency_safe,
            on_start=lambda use: self.emit(
                ToolCallUpdate(tool_call_id=use.id, status="in_progress")
            ),
            on_finish=self._finished,
        )
        return self._executor

    async def _run_one(self, use: ToolUseBlock) -> ToolOutcome:
        parts = self.parts
        history = parts.history
        if history.transcript is not None and not parts.tooling.is_read_only(use):
            # Durable before the side effect: a crash mid-tool is known on resume.
            await history.record_durable(
                ProgressRecord(
                    session_id=history.session_id,
                    turn_id=self.turn_id,
                    data=ToolStartedData(tool_use_id=use.id, name=use.name),
                )
            )
        return await run_tool_use(use, parts.runtime)

    def _finished(self, use: ToolUseBlock, outcome: ToolOutcome) -> None:
        history = self.parts.history
        # Each result reaches the file as its tool finishes (the message with all of a
        # batch's results is written when the last one ends): after a crash mid-batch,
        # resume keeps the finished ones instead of calling them interrupted.
        history.record(
            ProgressRecord(
                session_id=history.session_id,
                turn_id=self.turn_id,
                data=ToolFinishedData(tool_use_id=use.id, result=outcome.block),
            )
        )
        self.emit(
            ToolCallUpdate(
                tool_call_id=use.id,
                status="failed" if outcome.failed else "completed",
                content=outcome.display or None,
                raw_output=outcome.raw_output,
                rejected=outcome.rejected,
            )
        )

    # -- cancellation -----------------------------------------------------------------

    async def abort(self) -> None:
        """Close the history after a cancel: keep what the user saw, answer every tool_use
        (finished calls keep their real result, the rest say they were interrupted)."""
        history = self.parts.history
        executor, self._executor = self._executor, None
        outcomes: list[ToolOutcome] = []
        if executor is not None:
            outcomes = await asyncio.shield(executor.cancel())
        self._flush_partial_text()
        if self._partial:
            uses = [b for b in self._partial if isinstance(b, ToolUseBlock)]
            partial = Message(role="assistant", content=self._partial)
            history.append_assistant(self.turn_id, partial, self.parts.provider().model)
            by_id = {o.block.tool_use_id: o for o in outcomes}
            results: list[ToolResultBlock] = []
            for use in uses:
                outcome = by_id.get(use.id)
                results.append(outcome.block if outcome else interrupted_result(use.id))
            if results:
                history.append_tool_result_blocks(self.turn_id, results)
        elif outcomes:
            history.append_tool_result_blocks(self.turn_id, [o.block for o in outcomes])
        self._partial = []
        history.append_meta(self.turn_id, user_text(INTERRUPTED_BY_USER), "interrupt")
