"""Skills in a session, through the real engine: the listing in the system prompt, the
Skill tool, and offers triggered by the files the agent reads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tether import skills
from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionAnswer, PermissionRequest
from tether.engine.engine import QueryEngine
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.skills.registry import SkillRegistry
from tether.tasks.registry import TaskRegistry
from tether.tools.context import ToolConfig
from tether.tools.registry import core_tools


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def workspace(root: Path) -> list[Path]:
    write(
        root / ".tether/skills/commit/SKILL.md",
        "---\nname: commit\ndescription: Write commit messages the house way.\n---\n"
        "Write a commit message for: $ARGUMENTS\nTemplates: ${CLAUDE_SKILL_DIR}/templates\n",
    )
    write(root / ".claude/skills/commit/SKILL.md", "---\ndescription: shadowed\n---\nNo.\n")
    write(
        root / ".claude/skills/python-style/SKILL.md",
        '---\ndescription: Python conventions here.\npaths: ["**/*.py"]\n---\nUse ruff.\n',
    )
    write(
        root / ".claude/skills/deploy/SKILL.md",
        "---\ndescription: Deploy.\ndisable-model-invocation: true\n---\nDeploy it.\n",
    )
    write(
        root / ".claude/skills/release/SKILL.md",
        "---\ndescription: Cut a release.\nallowed-tools: Bash(git tag:*)\n---\nTag it.\n",
    )
    write(root / ".claude/skills/empty/SKILL.md", "---\ndescription: nothing\n---\n")
    write(root / "src/app.py", "print('hi')\n")
    write(root / "src/util.py", "x = 1\n")
    return [root / ".tether/skills", root / ".claude/skills"]


def test_registry_discovery_listing_and_offers(tmp_path: Path) -> None:
    registry = SkillRegistry(tmp_path, dirs=workspace(tmp_path))
    assert set(registry.skills) == {"commit", "python-style", "deploy", "release"}
    assert registry.skills["commit"].description == "Write commit messages the house way."
    assert any("empty" in p and "no body" in p for p in registry.problems)
    section = registry.prompt_section()
    assert "- commit: Write commit messages the house way." in section
    assert "- release: Cut a release." in section
    assert "python-style" not in section and "deploy" not in section
    tight = registry.prompt_section(budget=len(section) - 1)
    assert "- commit:" in tight and "(more skills: 1 not listed)" in tight
    offered = registry.offer_for([tmp_path / "src/app.py", Path("/elsewhere/x.py")])
    assert [s.name for s in offered] == ["python-style"]
    assert registry.offer_for([tmp_path / "README.md"]) == []
    assert registry.offer_for([tmp_path / "src/app.py"], exclude=["python-style"]) == []


class Answers:
    def __init__(self) -> None:
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return "allow_once"


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def last_user(request: Any) -> str:
    return request.messages[-1].model_dump_json()


def test_a_session_lists_loads_and_offers_skills(tmp_path: Path) -> None:
    registry = SkillRegistry(tmp_path, dirs=workspace(tmp_path))
    script = [
        [use("Read", file_path="src/app.py"), use("Skill", skill="commit", args="fix the bug")],
        [use("Read", file_path="src/util.py"), use("Skill", skill="deploy")],
        [use("Skill", skill="release")],
        [use("Bash", command="git tag v1")],
        [{"type": "text", "text": "Done."}],
    ]
    provider = ScriptedProvider(parse_script(script))
    answers = Answers()
    engine = QueryEngine(
        session_id="s",
        cwd=tmp_path,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(answers),
        tasks=TaskRegistry(tmp_path / "tasks"),
        # No sandbox here: otherwise every non-read-only command asks, rules or not.
        tool_config=ToolConfig(sandbox=False),
    )
    skills.attach(engine, registry)

    async def run() -> None:
        await asyncio.wait_for(engine.run("commit this"), timeout=20)
        await engine.close()

    asyncio.run(run())
    provider.assert_complete()
    first = provider.requests[0]
    assert "- commit: Write commit messages the house way." in first.system[-1].text
    assert "Skill" in [t.name for t in first.tools]
    second = last_user(provider.requests[1])
    assert "Write a commit message for: fix the bug" in second
    assert f"Templates: {tmp_path / '.tether/skills/commit'}/templates" in second
    assert "These skills apply to files you just worked on (src/app.py)" in second
    assert "- python-style: Python conventions here." in second
    third = last_user(provider.requests[2])
    assert "python-style" not in third  # offered once per session
    assert "The skill deploy can only be started by the user (/deploy)" in third
    # A skill with allowed-tools asks first; once loaded, its tools run without asking.
    assert [r.tool_name for r in answers.asked] == ["Skill"]
    assert "Bash(git tag:*)" in str(answers.asked[0].content)
    assert str(engine.rules.allow[-1]) == "Bash(git tag:*)"


async def test_loaded_skills_survive_a_compaction(tmp_path: Path) -> None:
    registry = SkillRegistry(tmp_path, dirs=workspace(tmp_path))
    script = [
        [{"type": "tool_use", "name": "Skill", "input": {"skill": "commit", "args": "fix bug"}}],
        [{"type": "text", "text": "loaded"}],
        [{"type": "text", "text": "<summary>we loaded a skill</summary>"}],
    ]
    provider = ScriptedProvider(parse_script(script))
    engine = QueryEngine(
        session_id="s",
        cwd=tmp_path,
        provider=provider,
        tools=core_tools(),
        editor=DiskEditor(),
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    skills.attach(engine, registry)
    await engine.run("load the commit skill")
    await engine.compact()
    kept = "\n".join(m.text for m in engine.messages)
    assert "we loaded a skill" in kept
    assert '<skill name="commit">' in kept and "Write a commit message for: fix bug" in kept
    provider.assert_complete()
