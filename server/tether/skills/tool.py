"""The ``Skill`` tool: loads a skill's instructions into the conversation on demand.

Loading text changes nothing, so it runs without a question. A skill with
``allowed-tools`` is different: loading it lets those tools run without asking for the
rest of the session, so the user approves that first (the question lists them).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.protocol.content import TextToolContent
from tether.skills.registry import Skill, SkillRegistry
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext

NAME = "Skill"


class SkillInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill: str = Field(min_length=1, description='The skill\'s name, e.g. "pdf-tools".')
    args: str | None = Field(default=None, description="Arguments for the skill, if any.")


def load_text(skill: Skill, args: str = "") -> str:
    return (
        f'<skill name="{skill.name}">\n'
        f"Files bundled with this skill are in {skill.folder}\n\n"
        f"{skill.render(args)}\n"
        "</skill>"
    )


def skill_tool(
    registry: SkillRegistry,
    grant: Callable[[Skill], None] | None = None,
    loaded: Callable[[Skill, str], None] | None = None,
) -> Tool[SkillInput]:
    """``grant`` is called with a loaded skill that has ``allowed-tools`` (the session
    turns them into allow rules); ``loaded`` with every skill loaded and its text (kept
    through compaction)."""

    def widens(inp: SkillInput) -> bool:
        skill = registry.get(inp.skill)
        return skill is not None and bool(skill.allowed_tools)

    async def validate(inp: SkillInput, _ctx: ToolContext) -> str | None:
        skill = registry.get(inp.skill)
        if skill is None:
            names = ", ".join(s.name for s in registry.invocable) or "none"
            return f"Unknown skill: {inp.skill}. Available skills: {names}"
        if not skill.model_invocable:
            return f"The skill {skill.name} can only be started by the user (/{skill.name})."
        return None

    async def permission(inp: SkillInput, _ctx: ToolContext) -> PermissionCheck:
        skill = registry.get(inp.skill)
        if skill is None or not skill.allowed_tools:
            return PermissionCheck("allow")
        tools = ", ".join(skill.allowed_tools)
        note = f"Loading {skill.name} lets these run without asking this session: {tools}"
        return PermissionCheck("ask", note, [TextToolContent(text=note)])

    async def call(inp: SkillInput, _ctx: ToolContext) -> ToolResult:
        skill = registry.get(inp.skill)
        assert skill is not None  # validate ran first
        if skill.allowed_tools and grant is not None:
            grant(skill)
        text = load_text(skill, inp.args or "")
        if loaded is not None:
            loaded(skill, text)
        return ToolResult(text, raw_output={"skill": skill.name})

    return build_tool(
        name=NAME,
        description=prompts.load("tools/Skill.md").strip(),
        input_model=SkillInput,
        call=call,
        kind="read",
        is_read_only=lambda inp: not widens(inp),
        is_concurrency_safe=lambda _inp: True,
        validate=validate,
        check_permissions=permission,
        title=lambda inp: f"Load skill: {inp.skill}",
        rule_content=lambda inp: inp.skill,
    )
