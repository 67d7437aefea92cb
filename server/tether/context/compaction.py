"""The compaction ladder, tried before each request, stopping once the context fits:

    (a) tool-result budget  results over a size cap go to a file; a preview and the path stay
    (b) microcompact        old read/search/shell results beyond the newest few are cleared
    (c) auto-compact        a summary request, then the history becomes boundary + summary +
                            re-attached essentials (recent files re-read, the todo plan,
                            running tasks, anything a source adds, e.g. invoked skills)

(a) applies to any oversized result (the cap follows the window); (b) only past the warning
band; (c) only past the auto-compact threshold, and only while a summary can help (the
history, not the system prompt and tools, is what is over it). Rungs (a) and (b) live in
``trim``. ``shrink`` runs the ladder again, whatever the thresholds say, when the API said
the prompt is too long or the context does not fit the window (``engine/overflow``);
``compact`` also serves manual compaction (``/compact``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tether import prompts
from tether.context.conversation import (
    Conversation,
    Emit,
    Trigger,
    boundary_records,
    split_tail,
)
from tether.context.reattach import Essentials, ReattachLimits
from tether.context.summarize import summarize
from tether.context.tokens import ContextGauge, RunningEstimate, TokenCounter
from tether.context.trim import ResultBudget, clear_old_results, result_cap
from tether.core.messages import Message, user_text
from tether.errors import ModelError
from tether.protocol.updates import Compaction
from tether.providers.base import TokenUsage
from tether.transcript.payloads import ContextTrimData
from tether.transcript.records import SystemRecord

__all__ = ["CompactionSettings", "Compactor", "Conversation", "Reduced"]


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
    """Below the size of a request refused without naming the window, or cut by the server
    (None: none was)."""
    answered: int = 0
    """The largest context (in tokens, as sized before sending) a server answered in this
    session: an empty answer to a smaller one is no sign of a full window."""
    output_counts: bool = False
    """The server counts the reply's ``max_tokens`` against the window with the prompt (a
    refusal said so): requests leave the reply only the room the window has."""
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

    def cut_by_server(self, engine: Conversation, sent: int) -> None:
        """The server kept far less of a request of about ``sent`` tokens than that: its
        window is smaller. The count of what it kept is no anchor; until the server says
        its window (``Provider.discover_window``), the thresholds stay below ``sent``."""
        assert self.gauge is not None
        self.gauge.invalidate()
        self.ceiling = min(self.ceiling or sent, sent - 1)

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

    def estimate(self, engine: Conversation) -> int:
        """Tether's own count of the next request (system prompt, tools, history), unscaled
        by any server's count and without the parts that are guesses (images, documents,
        search results): the least a server that kept the whole request would count."""
        assert self.running is not None
        return self._estimate(engine) - self.running.guessed

    def prefix_tokens(self, engine: Conversation) -> int:
        """The system prompt and tools, scaled like ``context_tokens``."""
        assert self.gauge is not None
        system, tools = engine.request_prefix()
        return round(self.counter.prefix(system, tools) * self.gauge.ratio)

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
            # Nothing before the current prompt to summarise: whether it fits is
            # ``engine/overflow``'s to check.
            return
        prefix = self.prefix_tokens(engine)
        if (
            not self.settings.auto_threshold
            and prefix + min(after - prefix, self.summary_max_tokens(self.window(engine)) // 4)
            > limits.auto
        ):
            # The system prompt and tools fill the threshold derived from a small window,
            # not the history: a summary would not get below it (and would be asked again
            # at every request). A threshold the user set is followed as set.
            return
        try:
            await self.compact(engine, turn_id, "auto", emit)
        except ModelError as e:  # the turn can still try; a reactive compaction may follow
            engine.note(f"Automatic compaction failed ({e}); continuing with the full context")

    async def shrink(
        self, engine: Conversation, turn_id: str, emit: Emit, trigger: Trigger = "reactive"
    ) -> Reduced:
        """The API said the prompt is too long (and may have named its window, which the
        provider took), or the context does not fit the window: the ladder again, each rung
        only while the context is still over the automatic threshold; a summary if the
        cheaper rungs are not enough."""
        limits = self.limits(engine)
        before = self.context_tokens(engine)
        after = await self._trim(engine, turn_id, emit, limits.warning, force=True, trigger=trigger)
        if after > limits.auto and len(engine.messages) > 1:
            await self.compact(engine, turn_id, trigger, emit)
            after = self.context_tokens(engine)
        return Reduced(before, after, self.window(engine), self.prefix_tokens(engine))

    async def _trim(
        self,
        engine: Conversation,
        turn_id: str,
        emit: Emit,
        target: int,
        *,
        force: bool = False,
        trigger: Trigger = "auto",
    ) -> int:
        """Rungs (a) and (b): results cut to the window's budget; past ``target`` (or when
        ``force``d), old results cleared. Returns the context size after them."""
        assert self._budget is not None and self.gauge is not None
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
