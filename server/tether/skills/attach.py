"""Give one session its skills: the listing in the system prompt, the ``Skill`` tool, and
path-triggered offers at turn boundaries."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tether.permissions.rules import Rule
from tether.skills.offers import SkillOffers
from tether.skills.registry import Skill, SkillRegistry
from tether.skills.tool import skill_tool

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine

log = logging.getLogger(__name__)

INVOKED_BUDGET_CHARS = 25_000 * 3
"""About 25k tokens of loaded skills survive a compaction."""


def attach(engine: QueryEngine, registry: SkillRegistry) -> SkillOffers:
    """Best called before the session's first request: the listing joins the system
    prompt, and adding it later invalidates the cached prompt once. Returns the session's
    offers (also registered as an attachment source)."""
    section = registry.prompt_section()
    if section and section not in engine.assembler.extra_sections:
        engine.assembler.extra_sections.append(section)
        engine.assembler.invalidate()
    if registry.invocable:

        def grant(skill: Skill) -> None:
            # Session rules: a settings reload rebuilds the rules and ends the grant.
            for text in skill.allowed_tools:
                try:
                    engine.rules.allow.append(Rule.parse(text))
                except ValueError as e:
                    log.warning("skill %s: allowed-tools entry skipped: %s", skill.name, e)

        invoked: dict[str, str] = {}

        def remember(skill: Skill, text: str) -> None:
            invoked[skill.name] = text

        def essentials() -> str:
            # Skills loaded before a compaction stay loaded after it (within a budget).
            kept = "\n".join(invoked.values())[:INVOKED_BUDGET_CHARS]
            return f"Skills loaded earlier in this session:\n{kept}" if kept else ""

        engine.tools.add(skill_tool(registry, grant, remember))
        engine.compactor.add_reattach_source(essentials)
    offers = SkillOffers(registry, engine.state.files)
    engine.attachment_sources.append(offers)
    return offers
