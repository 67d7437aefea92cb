"""The compaction ladder, tried before each request, stopping once the context fits:

    (a) tool-result budget  results over a size cap go to a file; a preview and the path stay
    (b) microcompact        old read/search/shell results beyond the newest few are cleared
    (c) auto-compact        a summary request, then the history becomes boundary + summary +
                            re-attached essentials (recent files re-read, the todo plan,
                            running tasks, anything a source adds, e.g. invoked skills)

(a) applies to any oversized result (the cap follows the window); (b) only past the warning
band; (c) only past the auto-compact threshold (rungs (a) and (b) live in ``trim``).
``after_refusal`` runs the ladder again when the API said the prompt is too long; ``compact``
also serves manual compaction (``/compact``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from tether import prompts
from tether.context.reattach import Essentials, ReattachLimits
from tether.context.summarize import summarize
from tether.context.tokens import ContextGauge, RunningEstimate, TokenCounter
from tether.context.trim import ResultBudget, clear_old_results, result_cap
from tether.core.hooks import Hooks
from tether.core.messages import (
    Message,
    RedactedThinkingBlock,
    ThinkingBlock,
    user_text,
)
from tether.errors import ModelError
from tether.protocol.updates import Compaction, SessionUpdate
from tether.providers.base import Provider, SystemBlock, TokenUsage, ToolSpec
from tether.transcript.payloads import AttachmentKind, CompactBoundaryData, ContextTrimData
from tether.transcript.records import AttachmentRecord, Record, SystemRecord

Trigger = Literal["auto", "manual", "reactive"]
Emit = Callable[[SessionUpdate], None]


class Conversation(Protocol):
    """What the ladder works on: the engine's view of its conversation."""

    @property
    def session_id(self) -> str: ...

    @property
    def messages(self) -> list[Message]:
        """The history; the ladder rewrites oversized and old results in place."""
        ...

    @property
    def provider(self) -> Provider: ...

    @property
    def hooks(self) -> Hooks: ...

    def request_prefix(self) -> tuple[list[SystemBlock], list[ToolSpec]]:
        """The system prompt and tools the next request sends with the history."""
        ...

    def discovered_tools(self) -> list[str]: ...

    def record(self, record: Record) -> None: ...

    def replace_history(self, messages: list[Message]) -> None:
        """The history becomes ``messages`` (the summary, what is kept after it)."""
        ...

    def count_usage(self, usage: TokenUsage) -> None:
        """A summary request's tokens count like any other request's."""
        ...

    def note(self, text: str) -> None: ...


class CompactionBlockedError(ModelError):
    """A PreCompact hook said no."""


@dataclass
class CompactionSettings:
    auto: bool = True
    tool_result_max_chars: int = 40_000
    preview_chars: int = 2_000
    microcompact_keep: int = 3
    auto_threshold: int | None = None
    """Tokens; default: the window minus room for the reply minus a safety margin."""
    warning_threshold: int | None = None
    summary_max_tokens: int = 8_000
    reattach_files: int = 5
    reattach_file_tokens: int = 5_000
    reattach_total_tokens: int = 30_000


@dataclass(frozen=True)
class Thresholds:
    auto: int
    warning: int


def thresholds(window: int, max_tokens: int, s: CompactionSettings) -> Thresholds:
    effective = window - min(max_tokens, window // 4)
    auto = s.auto_threshold or effective - min(13_000, effective // 10)
    warning = s.warning_threshold or auto - min(20_000, auto // 7)
    return Thresholds(auto, min(warning, auto))


@dataclass(frozen=True)
class Reduced:
    """What a compaction after a refusal achieved, in tokens of the context."""

    before: int
    after: int
    window: int
    prefix: int
    """The system prompt and tools: what no compaction can take away."""


@dataclass
class Compactor:
    settings: CompactionSettings
    results_dir: Path
    counter: TokenCounter = field(default_factory=TokenCounter)
    essentials: Essentials | None = None
    """What is re-attached after a summary (None: only the summary stays)."""
    gauge: ContextGauge | None = None
    running: RunningEstimate | None = None
    """The history's estimate, kept current as it grows (reset when rewritten)."""
    ceiling: int | None = None
    """Below the size of a request refused without naming the window (None: none was)."""
    _budget: ResultBudget | None = None

    def __post_init__(self) -> None:
        self.gauge = self.gauge or ContextGauge(self.counter)
        self.running = self.running or RunningEstimate(self.counter)
        self._budget = ResultBudget(self.results_dir, self.settings.preview_chars)

    def add_reattach_source(self, source: Callable[[], str]) -> None:
        """Something else to keep after a summary (e.g. the skills invoked so far)."""
        if self.essentials is not None:
            self.essentials.add_source(source)

    def observe(self, engine: Conversation, usage: TokenUsage) -> None:
        """A response's usage anchors the context size (see ``ContextGauge``)."""
        assert self.gauge is not None
        self.gauge.observe(engine.messages, usage, self._estimate(engine))

    def refused(self, engine: Conversation, tokens: int | None, limit: int | None) -> None:
        """The API refused the request it counted at ``tokens``: that is the size of the
        history as it stands (an anchor like a response's usage). A refusal that names no
        window still shows the window is smaller than the refused request: for the rest of
        the session, the thresholds stay below that size."""
        if tokens:
            self.observe(engine, TokenUsage(input_tokens=tokens))
        if limit is None:
            size = tokens or self.context_tokens(engine)
            self.ceiling = min(self.ceiling or size, size - 1)

    def window(self, engine: Conversation) -> int:
        """The window the thresholds follow: the provider's (learned windows included), or
        less after a refusal that named none."""
        window = engine.provider.context_window
        return min(window, self.ceiling) if self.ceiling else window

    def anchor(self, messages: list[Message], covered: int, usage: TokenUsage) -> None:
        """A resumed history: the usage stored with its newest response (covering
        ``messages[:covered]``) anchors the size, as if that response had just arrived."""
        assert self.gauge is not None
        if 0 < covered <= len(messages):
            self.gauge.observe(messages[:covered], usage, 0)

    def context_tokens(self, engine: Conversation) -> int:
        assert self.gauge is not None
        measured = self.gauge.measure(engine.messages)
        if measured is not None:
            return measured
        return round(self._estimate(engine) * self.gauge.ratio)

    def _estimate(self, engine: Conversation) -> int:
        assert self.running is not None
        system, tools = engine.request_prefix()
        return self.counter.prefix(system, tools) + self.running.of(engine.messages)

    def _rewritten(self) -> None:
        """Messages before the newest were replaced: nothing measured before still holds."""
        assert self.gauge is not None and self.running is not None
        self.gauge.invalidate()
        self.running.reset()

    def limits(self, engine: Conversation) -> Thresholds:
        return thresholds(self.window(engine), engine.provider.limits.default_output, self.settings)

    async def before_request(self, engine: Conversation, turn_id: str, emit: Emit) -> None:
        limits = self.limits(engine)
        after = await self._trim(engine, turn_id, emit, limits.warning)
        if after <= limits.auto or not self.settings.auto or len(engine.messages) <= 2:
            # Nothing before the current prompt to summarise: let the API have its say.
            return
        try:
            await self.compact(engine, turn_id, "auto", emit)
        except ModelError as e:  # the turn can still try; a reactive compaction may follow
            engine.note(f"Automatic compaction failed ({e}); continuing with the full context")

    async def after_refusal(self, engine: Conversation, turn_id: str, emit: Emit) -> Reduced:
        """The API said the prompt is too long (and may have named its window, which the
        provider took): the ladder again, each rung only while the context is still over
        the automatic threshold; a summary if the cheaper rungs are not enough."""
        limits = self.limits(engine)
        before = self.context_tokens(engine)
        after = await self._trim(engine, turn_id, emit, limits.warning, force=True)
        if after > limits.auto and len(engine.messages) > 1:
            await self.compact(engine, turn_id, "reactive", emit)
            after = self.context_tokens(engine)
        assert self.gauge is not None
        system, tools = engine.request_prefix()
        prefix = round(self.counter.prefix(system, tools) * self.gauge.ratio)
        return Reduced(before, after, self.window(engine), prefix)

    async def _trim(
        self, engine: Conversation, turn_id: str, emit: Emit, target: int, *, force: bool = False
    ) -> int:
        """Rungs (a) and (b): results cut to the window's budget; past ``target`` (or when
        ``force``d), old results cleared. Returns the context size after them."""
        assert self._budget is not None and self.gauge is not None
        trigger: Trigger = "reactive" if force else "auto"
        before = self.context_tokens(engine)
        cap = result_cap(self.window(engine), self.settings.tool_result_max_chars)
        stored = await self._budget.apply(engine.messages, cap)
        after = before
        if stored:
            self._rewritten()
            after = self.context_tokens(engine)
            counts = (before, after, stored)
            self._announce(engine, turn_id, emit, "tool_result_budget", trigger, *counts)
        if after <= target and not force:
            return after
        names = {
            u.id: u.name for m in engine.messages if m.role == "assistant" for u in m.tool_uses
        }
        keep = self.settings.microcompact_keep
        cleared = clear_old_results(engine.messages, names, keep, after - target, self.gauge.ratio)
        if cleared:
            self._rewritten()
            cleared_to = self.context_tokens(engine)
            counts = (after, cleared_to, cleared)
            self._announce(engine, turn_id, emit, "microcompact", trigger, *counts)
            after = cleared_to
        return after

    # -- (c) summary ------------------------------------------------------------------

    async def compact(
        self,
        engine: Conversation,
        turn_id: str | None,
        trigger: Trigger,
        emit: Emit,
        instructions: str = "",
    ) -> Compaction:
        before = self.context_tokens(engine)
        blocked = await engine.hooks.pre_compact(
            "manual" if trigger == "manual" else "auto", instructions
        )
        if blocked:
            raise CompactionBlockedError(f"a PreCompact hook blocked the compaction: {blocked}")
        history, tail = split_tail(engine.messages)
        if self.counter.messages(tail) > self.window(engine) // 8:
            history, tail = engine.messages, []
        out_tokens = self.summary_max_tokens(self.window(engine))
        summary = await summarize(
            engine.provider,
            history,
            instructions,
            emit,
            out_tokens,
            self.counter,
            engine.count_usage,
            self.window(engine),
        )
        kept = [
            user_text(prompts.render("compaction/continuation.md", summary=summary)),
            *await self._essentials(engine),
        ]
        context = await engine.hooks.session_start("compact")
        if context:
            kept.append(user_text(f"<system-reminder>\n{context}\n</system-reminder>"))
        engine.replace_history([*kept, *tail])
        self._rewritten()
        after = self.context_tokens(engine)
        for record in boundary_records(engine, turn_id, trigger, before, after, [*kept, *tail]):
            engine.record(record)
        update = Compaction(trigger=trigger, tokens_before=before, tokens_after=after)
        emit(update)
        return update

    def summary_max_tokens(self, window: int) -> int:
        return max(min(self.settings.summary_max_tokens, window // 8), 256)

    async def _essentials(self, engine: Conversation) -> list[Message]:
        if self.essentials is None:
            return []
        limits = ReattachLimits(
            self.settings.reattach_files,
            self.settings.reattach_file_tokens,
            self.settings.reattach_total_tokens,
        )
        return await self.essentials.gather(self.window(engine), limits)

    def _announce(
        self,
        engine: Conversation,
        turn_id: str,
        emit: Emit,
        kind: Literal["tool_result_budget", "microcompact"],
        trigger: Trigger,
        before: int,
        after: int,
        n: int,
    ) -> None:
        engine.record(
            SystemRecord(
                session_id=engine.session_id,
                turn_id=turn_id,
                data=ContextTrimData(
                    subtype=kind, count=n, tokens_before=before, tokens_after=after
                ),
            )
        )
        emit(Compaction(trigger=trigger, tokens_before=before, tokens_after=after, strategy=kind))


def split_tail(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """Mid tool loop with thinking, the last assistant message and its results stay verbatim
    after the summary, its thinking blocks and signatures too: the loop goes on from there
    with the model's reasoning intact (the caller drops a tail too big to keep)."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    if last <= 0 or not messages[last].tool_uses or last + 1 >= len(messages):
        return messages, []
    if not isinstance(messages[last].content[0], ThinkingBlock | RedactedThinkingBlock):
        return messages, []
    answered = {r.tool_use_id for m in messages[last + 1 :] for r in m.tool_results}
    if all(u.id in answered for u in messages[last].tool_uses):
        return messages[:last], messages[last:]
    return messages, []


def boundary_records(
    engine: Conversation,
    turn_id: str | None,
    trigger: Trigger,
    before: int,
    after: int,
    kept: list[Message],
) -> list[Record]:
    records: list[Record] = [
        SystemRecord(
            session_id=engine.session_id,
            turn_id=turn_id,
            data=CompactBoundaryData(
                trigger=trigger,
                tokens_before=before,
                tokens_after=after,
                discovered_tools=sorted(engine.discovered_tools()),
            ),
        )
    ]
    tail: list[AttachmentKind] = [
        "compact_tail" if m.role == "assistant" or m.tool_results else "compact_reattach"
        for m in kept[1:]
    ]
    kinds: list[AttachmentKind] = ["compact_summary", *tail]
    records += [
        AttachmentRecord(session_id=engine.session_id, turn_id=turn_id, message=m, attachment=k)
        for m, k in zip(kept, kinds, strict=True)
    ]
    return records
