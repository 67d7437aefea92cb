"""Slash command expansion through a real engine's permission pipeline: ``!`cmd``` runs
only when the pipeline allows it (denied or rejected: not run, and the text says so),
``@file`` attaches workspace files, ``allowed-tools`` and ``model`` hold for the command's
turn; MCP prompt arguments."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionAnswer, PermissionRequest
from tether.engine.engine import QueryEngine
from tether.permissions.policy import RuleSet
from tether.permissions.rules import Rule
from tether.protocol.content import ContentBlock, ResourceLink, TextContent
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.sandbox.shell_sandbox import BwrapSandbox
from tether.skills import commands
from tether.skills.expand import CommandError, McpPromptInfo, expand_prompt
from tether.skills.session_prompt import command_turn, expand_for_session
from tether.tasks.registry import TaskRegistry
from tether.tools.context import ToolConfig
from tether.tools.registry import core_tools

REVIEW = """---
description: Review the working tree
allowed-tools: Bash(touch:*)
model: haiku
---
Status:
!`git status --short`
Then !`touch marker.txt` and read @README.md and @"docs/a b.md", focusing on $1.
"""


class Answers:
    def __init__(self, answer: PermissionAnswer) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(str(request.raw_input.get("command")))
        return self.answer


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "review.md").write_text(REVIEW)
    (root / ".claude" / "commands" / "sneaky.md").write_text("Do it: !`touch sneaky.txt`\n")
    (root / "README.md").write_text("# Readme\n")
    (root / "docs").mkdir()
    (root / "docs" / "a b.md").write_text("spaced\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def engine_for(root: Path, answers: Answers, rules: RuleSet | None = None) -> QueryEngine:
    return QueryEngine(
        session_id="s1",
        cwd=root,
        provider=ScriptedProvider(parse_script([]), model="main-model"),
        tools=core_tools(),
        editor=DiskEditor(answers),
        rules=rules or RuleSet(),
        # Confined commands, as in a workspace: allow rules then let them run unasked.
        tool_config=ToolConfig(shell_sandbox=BwrapSandbox(root)),
        tasks=TaskRegistry(root.parent / "tasks"),
    )


def text(prompt: str) -> list[ContentBlock]:
    return [TextContent(text=prompt)]


async def test_command_runs_shell_attaches_files_and_substitutes(repo: Path) -> None:
    answers = Answers("reject_once")
    engine = engine_for(repo, answers)
    found = commands.discover(repo, dirs=[repo / ".claude" / "commands"])
    expanded = await expand_for_session(engine, text("/review parsing"), commands=found)
    body = expanded.blocks[0]
    assert isinstance(body, TextContent)
    assert "?? README.md" in body.text and "?? docs/" in body.text  # git status ran
    assert "!`" not in body.text and "focusing on parsing." in body.text
    assert (repo / "marker.txt").exists()  # allowed by the command's allowed-tools
    assert answers.asked == []  # git status is read-only; touch was allowed: no question
    links = [b for b in expanded.blocks if isinstance(b, ResourceLink)]
    assert [Path(link.uri.removeprefix("file://")).name for link in links] == [
        "README.md",
        "a%20b.md",
    ]
    assert expanded.allowed_tools == ("Bash(touch:*)",) and expanded.model == "haiku"
    assert engine.rules.allow == []  # the grant ended with the expansion
    await engine.close()


async def test_denied_command_does_not_run(repo: Path) -> None:
    engine = engine_for(repo, Answers("allow_once"), RuleSet(deny=[Rule.parse("Bash(touch:*)")]))
    found = commands.discover(repo, dirs=[repo / ".claude" / "commands"])
    expanded = await expand_for_session(engine, text("/review x"), commands=found)
    assert not (repo / "marker.txt").exists()
    body = expanded.blocks[0]
    assert isinstance(body, TextContent)
    assert (
        "[`touch marker.txt` was not run: Permission denied: denied by the rule Bash(touch:*)]"
        in body.text
    )
    assert "?? README.md" in body.text  # the allowed command still ran
    await engine.close()


async def test_rejected_question_means_not_run(repo: Path) -> None:
    answers = Answers("reject_once")
    engine = engine_for(repo, answers)
    found = commands.discover(repo, dirs=[repo / ".claude" / "commands"])
    expanded = await expand_for_session(engine, text("/sneaky"), commands=found)
    assert answers.asked == ["touch sneaky.txt"]
    assert not (repo / "sneaky.txt").exists()
    assert "was not run: The user declined" in str(expanded.blocks[0])
    await engine.close()


async def test_typed_text_is_never_run_and_mentions_stay_inside(repo: Path) -> None:
    engine = engine_for(repo, Answers("allow_once"))
    typed = await expand_for_session(engine, text("please !`touch typed.txt` now"), commands=[])
    assert typed.blocks == text("please !`touch typed.txt` now")
    assert not (repo / "typed.txt").exists()
    cmd = commands.parse_command("peek", "Look at @../secret.txt and @README.md.")
    expanded = await expand_for_session(engine, text("/peek"), commands=[cmd])
    links = [b.uri for b in expanded.blocks if isinstance(b, ResourceLink)]
    assert links == [(repo / "README.md").resolve().as_uri()]  # the trailing dot is not part of it
    await engine.close()


async def test_command_turn_scopes_model_and_rules(repo: Path) -> None:
    engine = engine_for(repo, Answers("allow_once"))
    found = commands.discover(repo, dirs=[repo / ".claude" / "commands"])
    expanded = await expand_for_session(engine, text("/review x"), commands=found)
    made: list[str] = []

    def provider_for(model: str) -> Any:
        made.append(model)
        return ScriptedProvider(parse_script([]), model=f"scripted-{model}")

    async with command_turn(engine, expanded, provider_for):
        assert engine.provider.model == "scripted-haiku"
        assert Rule.parse("Bash(touch:*)") in engine.rules.allow
    assert engine.provider.model == "main-model" and engine.rules.allow == []
    assert made == ["haiku"]
    await engine.close()


class Prompts:
    """The MCP side, where only argument handling is under test."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, str]]] = []

    def prompts(self) -> list[McpPromptInfo]:
        return [McpPromptInfo("docs", "review", "Review", (("topic", True), ("depth", False)))]

    def servers(self) -> list[str]:
        return ["docs"]

    async def render_prompt(
        self, server: str, name: str, arguments: dict[str, str]
    ) -> list[ContentBlock]:
        self.calls.append((server, name, arguments))
        return [TextContent(text=f"review {arguments}")]

    async def resource(self, server: str, uri: str) -> list[ContentBlock]:
        return [TextContent(text=f"<{server} {uri}>")]


async def no_shell(command: str, allowed: Any) -> Any:
    raise AssertionError("no shell command in MCP prompts")


async def test_mcp_prompt_arguments(tmp_path: Path) -> None:
    mcp = Prompts()
    expanded = await expand_prompt(
        text('/mcp__docs__review "error handling" deep and wide'),
        cwd=tmp_path,
        commands=[],
        run_shell=no_shell,
        mcp=mcp,
    )
    assert mcp.calls == [("docs", "review", {"topic": "error handling", "depth": "deep and wide"})]
    assert expanded.command == "mcp__docs__review"
    with pytest.raises(
        CommandError, match="needs topic: use /mcp__docs__review <topic> \\[depth\\]"
    ):
        await expand_prompt(
            text("/mcp__docs__review"), cwd=tmp_path, commands=[], run_shell=no_shell, mcp=mcp
        )
    unknown = await expand_prompt(
        text("/mcp__docs__nope x"), cwd=tmp_path, commands=[], run_shell=no_shell, mcp=mcp
    )
    assert unknown.blocks == text("/mcp__docs__nope x")
    mention = await expand_prompt(
        text("see @docs:docs://handbook, and @other:x"),
        cwd=tmp_path,
        commands=[],
        run_shell=no_shell,
        mcp=mcp,
    )
    assert mention.blocks[1:] == [TextContent(text="<docs docs://handbook>")]
