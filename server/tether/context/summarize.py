"""Running the summary requests ``summary_request`` plans, for the compaction ladder."""

from __future__ import annotations

import re
from collections.abc import Callable

from tether import prompts
from tether.context.summary_request import SummaryPart, plan_summary
from tether.context.tokens import TokenCounter
from tether.core.messages import Message, user_text
from tether.errors import ModelError, PromptTooLongError
from tether.protocol.updates import Notice, SessionUpdate
from tether.providers.base import Completed, ModelRequest, Provider, SystemBlock, TokenUsage

_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)


async def summarize(
    provider: Provider,
    history: list[Message],
    instructions: str,
    emit: Callable[[SessionUpdate], None],
    max_tokens: int,
    counter: TokenCounter,
    count_usage: Callable[[TokenUsage], None],
    window: int | None = None,
) -> str:
    """Summarise ``history`` in requests that fit the window (``window``, else the
    provider's); if the API still says a request is too long, plan again once with half the
    room (or within the window the refusal named, if that is less)."""
    extra = (
        f"\nAlso follow these instructions for the summary: {instructions}" if instructions else ""
    )
    system = [SystemBlock(prompts.load("compaction/system.md").strip())]
    prefix = counter.prefix(system, [])
    budget = (window or provider.context_window) - max_tokens - prefix
    try:
        return await _run(
            provider, plan_summary(history, budget, extra), system, max_tokens, extra, count_usage
        )
    except PromptTooLongError as e:
        emit(Notice(level="info", message="The summary request was too long; trying in parts"))
        if e.limit is not None:
            budget = min(budget, e.limit - max_tokens - prefix)
        parts = plan_summary(history, budget // 2, extra)
        return await _run(provider, parts, system, max_tokens, extra, count_usage)


async def _run(
    provider: Provider,
    parts: list[SummaryPart],
    system: list[SystemBlock],
    max_tokens: int,
    extra: str,
    count_usage: Callable[[TokenUsage], None],
) -> str:
    summary = ""
    for part in parts:
        part = SummaryPart(part.transcript, summary, part.part, part.parts)
        request = ModelRequest(
            model=provider.model,
            system=system,
            messages=[user_text(part.prompt(extra))],
            tools=[],
            max_tokens=max_tokens,
            cache_history=False,
            thinking=False,
        )
        completed: Completed | None = None
        async for event in provider.stream(request):
            if isinstance(event, Completed):
                completed = event
        if completed is None or not completed.message.text.strip():
            raise ModelError("the summary request returned no text")
        count_usage(completed.usage)
        text = completed.message.text
        match = _SUMMARY.search(text)
        summary = (match.group(1) if match else text).strip()
    return summary
