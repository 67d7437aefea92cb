"""Prompt expansion for one session: ``skills.expand`` wired to an engine's permission
pipeline, and the command's ``allowed-tools`` and ``model`` applied for its turn.

    expanded = await expand_for_session(engine, blocks, commands=found, mcp=source)
    async with command_turn(engine, expanded, make_provider):
        ...run the turn with expanded.blocks...
"""

from __future__ import annotations

import contextlib
import logging
import re
import uuid
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from typing import TYPE_CHECKING

from tether.core.messages import ToolUseBlock
from tether.orchestration.pipeline import run_tool_use
from tether.permissions.decision import RuleSet
from tether.permissions.rules import Rule
from tether.protocol.content import ContentBlock
from tether.providers.base import Provider
from tether.skills.commands import Command
from tether.skills.expand import ExpandedPrompt, McpPrompts, ShellRun, expand_prompt

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine

log = logging.getLogger(__name__)
_ERROR = re.compile(r"\A<tool_use_error>(.*)</tool_use_error>\Z", re.DOTALL)


async def expand_for_session(
    engine: QueryEngine,
    blocks: list[ContentBlock],
    *,
    commands: Sequence[Command],
    mcp: McpPrompts | None = None,
) -> ExpandedPrompt:
    async def run_shell(command: str, allowed: Sequence[str]) -> ShellRun:
        use = ToolUseBlock(
            id=f"toolu_cmd_{uuid.uuid4().hex[:16]}", name="Bash", input={"command": command}
        )
        with granted(engine.rules, allowed):
            outcome = await run_tool_use(use, engine.tool_runtime)
        text = outcome.block.text
        refused = _ERROR.match(text.strip())
        if refused is not None:  # the pipeline stopped it before it ran
            return ShellRun(False, refused.group(1).strip())
        return ShellRun(True, text)

    return await expand_prompt(
        blocks, cwd=engine.cwd, commands=commands, run_shell=run_shell, mcp=mcp
    )


@contextlib.contextmanager
def granted(rules: RuleSet, allowed: Sequence[str]) -> Generator[None]:
    """``allowed`` as allow rules for the duration (a settings reload meanwhile ends it)."""
    added: list[Rule] = []
    for text in allowed:
        try:
            added.append(Rule.parse(text))
        except ValueError as e:
            log.warning("allowed-tools entry skipped: %s", e)
    rules.allow.extend(added)
    try:
        yield
    finally:
        for rule in added:
            with contextlib.suppress(ValueError):
                rules.allow.remove(rule)


@contextlib.asynccontextmanager
async def command_turn(
    engine: QueryEngine,
    expanded: ExpandedPrompt,
    make_provider: Callable[[str], Provider] | None = None,
) -> AsyncGenerator[None]:
    """The command's ``allowed-tools`` allowed and its ``model`` used while its turn runs."""
    previous: Provider | None = None
    if expanded.model and make_provider is not None:
        previous = engine.provider
        engine.set_provider(make_provider(expanded.model))
    try:
        with granted(engine.rules, expanded.allowed_tools):
            yield
    finally:
        if previous is not None:
            used = engine.provider
            engine.set_provider(previous)
            await used.aclose()
