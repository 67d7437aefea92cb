"""Skills and slash commands.

    registry = SkillRegistry(root)        # per workspace (``reload()`` after changes)
    attach(engine, registry)              # per session, before its first request
    prompt = commands.expand(text, root)  # a typed ``/name args``, or None

Skills are prompt packages, not tools: only their names and descriptions are in the
prompt, the body loads on demand, and whatever a skill makes the agent do still goes
through the one tool pipeline and its permissions.
"""

from tether.skills import commands
from tether.skills.attach import attach
from tether.skills.offers import SkillOffers
from tether.skills.registry import Skill, SkillRegistry
from tether.skills.tool import skill_tool

__all__ = ["Skill", "SkillOffers", "SkillRegistry", "attach", "commands", "skill_tool"]
