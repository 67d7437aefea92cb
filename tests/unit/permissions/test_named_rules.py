"""Skill and Agent rules name the skill or agent type, not a path."""

from __future__ import annotations

from pathlib import Path

from tether.permissions.rules import Rule, Subject, matches


def test_skill_and_agent_rules_match_names() -> None:
    cwd = Path("/w")
    assert matches(Rule.parse("Skill(deploy)"), Subject("Skill", "deploy", cwd))
    assert not matches(Rule.parse("Skill(deploy)"), Subject("Skill", "deploy-prod", cwd))
    assert matches(Rule.parse("Skill(deploy*)"), Subject("Skill", "deploy-prod", cwd))
    assert matches(Rule.parse("Agent(explore)"), Subject("Agent", "explore", cwd))
    assert not matches(Rule.parse("Agent(explore)"), Subject("Agent", "general-purpose", cwd))
