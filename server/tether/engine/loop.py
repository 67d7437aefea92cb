"""One turn of the query loop, phase by phase.

    assemble context -> call the model (streaming; safe tools start early) -> run tool
    batches -> drain queued input and notifications -> typed transition or terminal

Each iteration ends in a ``Step`` (engine/transitions.py). Cancellation can land anywhere;
``abort`` then closes the history so every ``tool_use`` has a ``tool_result``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tether.core.messages import (
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)
from tether.engine.transitions import (
    CompactRetry,
    InputInjected,
    MaxTokensContinue,
    MaxTokensEscalate,
    NextTurn,
    PauseTurnContinue,
    Step,
    StopHookContinue,
    Terminal,
)
from tether.errors import ModelError, PromptTooLongError
from tether.orchestration.executor import StreamingToolExecutor
from tether.orchestration.pipeline import ToolOutcome, run_tool_use
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
    Retrying,
    ServerToolFinished,
    ServerToolStarted,
    StreamReset,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
)
from tether.transcript.records import ProgressRecord

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine

CONTINUE_PROMPT = (
    "Your previous reply was cut off at the output limit. Continue exactly where you "
    "stopped, without repeating anything."
)
INTERRUPTED_BY_USER = "[Request interrupted by user]"
MAX_PAUSES = 10
"""Paused server-side tool loops resumed in one turn before giving up."""


class TurnLoop:
    """Runs one turn for ``engine``; updates go to ``emit``."""

    def __init__(
        self, engine: QueryEngine, turn_id: str, emit: Callable[[SessionUpdate], None]
    ) -> None:
        self.engine = engine
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
        self.reactive_done = False
        self.escalated = False
        """The output limit was raised to the model's maximum after a cut-off reply."""

    async def run(self) -> Terminal:
        while True:
            step = await self.iterate()
            if isinstance(step, Terminal):
                return step
            self.engine.record_transition(self.turn_id, step)

    # -- one iteration ---------------------------------------------------------------

    async def iterate(self) -> Step:
        engine = self.engine
        cfg = engine.config
        if self.model_calls > 0:
            if cfg.max_turns is not None and self.model_calls >= cfg.max_turns:
                return Terminal("max_turns", f"stopped after {self.model_calls} model requests")
            if engine.meter.budget_exhausted(cfg.max_budget_usd):
                return Terminal(
                    "budget_exhausted",
                    f"the budget of ${cfg.max_budget_usd:.2f} is used up "
                    f"(${engine.meter.session.cost_usd or 0:.4f} spent)",
                )
        await engine.compactor.before_request(engine, self.turn_id, self.emit)
        self.hook_notices()
        request = engine.assembler.request(engine.messages, engine.tool_specs())
        limits = engine.provider.limits
        max_tokens = limits.max_output if self.escalated else limits.default_output
        request = replace(request, max_tokens=max_tokens)
        self.model_calls += 1
        executor = self._new_executor()
        try:
            completed = await self.call_model(request, executor)
        except PromptTooLongError as e:
            await executor.cancel()
            return await self._reactive_compaction(e)
        except ModelError as e:
            await executor.cancel()
            return Terminal("model_error", str(e))

        assistant = completed.message
        if (
            completed.stop_reason == "max_tokens"
            and not self.escalated
            and limits.max_output > max_tokens
        ):
            self._escalate(limits.max_output)
        engine.append_assistant(self.turn_id, assistant, completed)
        engine.compactor.observe(engine, completed.usage)
        self._partial, self._partial_text = [], ""
        # A server may have reported its window with this first response (discovery).
        engine.meter.context_window = engine.provider.context_window
        self.emit(engine.meter.add(completed.usage))

        if assistant.tool_uses:
            outcomes = await executor.results()
            self._executor = None
            engine.append_tool_results(self.turn_id, assistant, outcomes)
            self.hook_notices()
            await engine.drain_inbox(self.turn_id)
            stopped = next((o.stop_turn for o in outcomes if o.stop_turn), None)
            if stopped is not None:
                return Terminal("hook_stopped", stopped)
            return NextTurn()
        self._executor = None

        if completed.stop_reason == "max_tokens":
            if self.continuations >= cfg.max_tokens_continuations:
                return Terminal("max_tokens", "the reply kept reaching the output token limit")
            self.continuations += 1
            engine.append_meta(self.turn_id, user_text(CONTINUE_PROMPT), "continuation")
            return MaxTokensContinue(self.continuations)
        if completed.stop_reason == "refusal":
            return Terminal("refusal", "the model declined to continue")
        if completed.stop_reason == "pause_turn":
            if self.pauses >= MAX_PAUSES:
                return Terminal("model_error", "the provider kept pausing its server-side tools")
            self.pauses += 1
            return PauseTurnContinue(self.pauses)
        injected = await engine.drain_inbox(self.turn_id)
        if injected:
            return InputInjected(injected)
        verdict = await engine.hooks.stop(
            stop_hook_active=self.stop_blocks > 0, last_message=assistant.text
        )
        if verdict.stop_turn is not None:
            return Terminal("hook_stopped", verdict.stop_turn)
        if verdict.block_reason is not None and self.stop_blocks < cfg.max_stop_hook_blocks:
            self.stop_blocks += 1
            note = f"A Stop hook asked you to keep going: {verdict.block_reason}"
            engine.append_meta(self.turn_id, user_text(note), "stop_hook")
            return StopHookContinue(verdict.block_reason)
        return Terminal("completed")

    def _escalate(self, max_tokens: int) -> None:
        """The reply hit the default output limit: from the next request on, this turn asks
        for the model's full limit (once; then the continuation prompts take over). What
        was streamed stays: editors cannot take text back, so the model continues it."""
        self.escalated = True
        self.engine.record_transition(self.turn_id, MaxTokensEscalate(max_tokens))
        self.emit(
            Notice(
                level="info",
                message=f"The reply reached the output limit; continuing with up to "
                f"{max_tokens} output tokens",
            )
        )

    def hook_notices(self) -> None:
        """Hook ``systemMessage``s and hook failures reach the user as notices."""
        for notice in self.engine.hooks.drain_notices():
            self.emit(Notice(level=notice.level, message=notice.message))

    async def _reactive_compaction(self, error: PromptTooLongError) -> Step:
        """The API said the prompt is too long: compact once and retry, else stop."""
        if self.reactive_done:
            return Terminal("prompt_too_long", str(error))
        self.reactive_done = True
        self.model_calls -= 1  # the refused request does not count as a model turn
        try:
            await self.engine.compactor.compact(self.engine, self.turn_id, "reactive", self.emit)
        except ModelError as e:
            return Terminal("prompt_too_long", f"{error}; compaction failed too: {e}")
        return CompactRetry()

    # -- model phase ------------------------------------------------------------------

    async def call_model(self, request: Any, executor: StreamingToolExecutor) -> Completed:
        engine = self.engine
        async for event in engine.provider.stream(request):
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
        title, kind, locations = self.engine.describe_call(use)
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
            self.engine.is_concurrency_safe,
            on_start=lambda use: self.emit(
                ToolCallUpdate(tool_call_id=use.id, status="in_progress")
            ),
            on_finish=self._finished,
        )
        return self._executor

    async def _run_one(self, use: ToolUseBlock) -> ToolOutcome:
        engine = self.engine
        if engine.transcript is not None and not engine.is_read_only(use):
            # Durable before the side effect: a crash mid-tool is known on resume.
            await engine.transcript.append_durable(
                ProgressRecord(
                    session_id=engine.session_id,
                    turn_id=self.turn_id,
                    event="tool_started",
                    data={"toolUseId": use.id, "name": use.name},
                )
            )
        return await run_tool_use(use, engine.tool_runtime)

    def _finished(self, use: ToolUseBlock, outcome: ToolOutcome) -> None:
        transcript = self.engine.transcript
        if transcript is not None:
            # Each result reaches the file as its tool finishes (the message with all of a
            # batch's results is written when the last one ends): after a crash mid-batch,
            # resume keeps the finished ones instead of calling them interrupted.
            transcript.append(
                ProgressRecord(
                    session_id=self.engine.session_id,
                    turn_id=self.turn_id,
                    event="tool_finished",
                    data={"toolUseId": use.id, "result": outcome.block.model_dump(mode="json")},
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
        engine = self.engine
        executor, self._executor = self._executor, None
        outcomes: list[ToolOutcome] = []
        if executor is not None:
            outcomes = await asyncio.shield(executor.cancel())
        self._flush_partial_text()
        if self._partial:
            uses = [b for b in self._partial if isinstance(b, ToolUseBlock)]
            engine.append_assistant(self.turn_id, Message(role="assistant", content=self._partial))
            by_id = {o.block.tool_use_id: o for o in outcomes}
            results: list[ToolResultBlock] = []
            for use in uses:
                outcome = by_id.get(use.id)
                results.append(outcome.block if outcome else engine.interrupted_result(use.id))
            if results:
                engine.append_tool_result_blocks(self.turn_id, results)
        elif outcomes:
            engine.append_tool_result_blocks(self.turn_id, [o.block for o in outcomes])
        self._partial = []
        engine.append_meta(self.turn_id, user_text(INTERRUPTED_BY_USER), "interrupt")
