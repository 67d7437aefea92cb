"""Frontmatter parsing and slash commands (command files and skills as commands)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.acp import commands as acp_commands
from tether.protocol.content import TextContent
from tether.skills import commands
from tether.skills.frontmatter import as_list, split
from tether.skills.registry import SkillRegistry, substitute

FRONT = """---
name: pdf-tools
description: >
  Fill and merge
  PDF forms.
allowed-tools: Read, Bash(git diff:*), "Grep"
paths:
  - "**/*.pdf"
  - docs/*.md
hooks:
  PreToolUse:
    - matcher: Bash
disable-model-invocation: true
literal: |
  line one
    indented
# a comment
tags: [a, "b, c", d]
---
Body here.
"""


def test_frontmatter_subset() -> None:
    fields, body = split(FRONT)
    assert body == "Body here.\n"
    assert fields["name"] == "pdf-tools"
    assert fields["description"] == "Fill and merge PDF forms.\n"
    assert as_list(fields["allowed-tools"]) == ["Read", "Bash(git diff:*)", "Grep"]
    assert fields["paths"] == ["**/*.pdf", "docs/*.md"]
    assert fields["hooks"] == {"PreToolUse": [{"matcher": "Bash"}]}
    assert fields["disable-model-invocation"] is True
    assert fields["literal"] == "line one\n  indented\n"
    assert fields["tags"] == ["a", "b, c", "d"]
    assert split("no frontmatter") == ({}, "no frontmatter")


def test_yaml_the_subset_parser_got_wrong() -> None:
    """Multi-line plain scalars, escapes in double quotes, doubled quotes in single ones."""
    text = (
        "---\n"
        "name: t\n"
        "description: Fill and merge\n"
        "  PDF forms, then\n"
        "  check them.\n"
        'argument-hint: "a \\"quoted\\" hint\\twith a tab"\n'
        "when: 'it''s late'\n"
        "---\nBody\n"
    )
    fields, body = split(text)
    assert fields["description"] == "Fill and merge PDF forms, then check them."
    assert fields["argument-hint"] == 'a "quoted" hint\twith a tab'
    assert fields["when"] == "it's late"
    assert body == "Body\n"


def test_invalid_yaml_falls_back_to_lines_with_a_warning(caplog: Any) -> None:
    text = "---\nname: t\ndescription: Use when: the user asks\n---\nBody\n"
    fields, _ = split(text, "skills/t/SKILL.md")
    assert fields == {"name": "t", "description": "Use when: the user asks"}
    assert "skills/t/SKILL.md is not valid YAML" in caplog.text


def test_substitution_rules() -> None:
    assert substitute("Fix $ARGUMENTS now", "issue 12", zero_based=False) == "Fix issue 12 now"
    assert substitute("$1 then $2", 'a "b c"', zero_based=False) == "a then b c"
    assert substitute("$0 then $1", "a b", zero_based=True) == "a then b"
    assert substitute("$ARGUMENTS[1]!", "a b", zero_based=False) == "b!"
    assert substitute("Review.", "src/x.py", zero_based=False) == "Review.\n\nARGUMENTS: src/x.py"
    assert substitute("Review.", "", zero_based=False) == "Review."


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_commands_expand_and_skills_win_clashes(tmp_path: Path) -> None:
    write(
        tmp_path / ".tether/commands/fix.md",
        "---\ndescription: Fix an issue\nargument-hint: <number>\n---\nFix issue #$1: $ARGUMENTS\n",
    )
    write(tmp_path / ".claude/commands/fix.md", "shadowed by .tether\n")
    write(tmp_path / ".claude/commands/review.md", "Review the diff.\n")
    write(tmp_path / ".claude/commands/not a name.md", "skipped\n")
    write(
        tmp_path / ".tether/skills/review/SKILL.md",
        "---\ndescription: Review like a senior\n---\nReview $ARGUMENTS carefully.\n",
    )
    write(
        tmp_path / ".tether/skills/hidden/SKILL.md",
        "---\ndescription: x\nuser-invocable: false\n---\nHidden.\n",
    )
    registry = SkillRegistry(tmp_path, dirs=[tmp_path / ".tether/skills"])
    dirs = [tmp_path / ".tether/commands", tmp_path / ".claude/commands"]
    found = commands.discover(tmp_path, dirs=dirs, skills=registry)
    by_name = {c.name: c for c in found}
    assert set(by_name) == {"fix", "review"}
    assert (by_name["fix"].description, by_name["fix"].hint) == ("Fix an issue", "<number>")
    assert by_name["review"].kind == "skill"
    assert commands.expand("/fix 12 today", tmp_path, commands=found) == "Fix issue #12: 12 today"
    review = commands.expand("/review src/a.py", tmp_path, commands=found)
    assert review is not None and review.startswith('<skill name="review">')
    assert "Review src/a.py carefully." in review
    assert commands.expand("/usr/bin/env is a path", tmp_path, commands=found) is None
    assert commands.expand("plain text", tmp_path, commands=found) is None


def test_the_acp_front_door_delegates(tmp_path: Path) -> None:
    write(tmp_path / ".tether/commands/greet.md", "Say hello to $ARGUMENTS.\n")
    found = [c for c in acp_commands.discover(tmp_path) if c.name == "greet"]
    assert acp_commands.available(found).available_commands[0].name == "greet"
    blocks = acp_commands.expand([TextContent(text="/greet Ada")], found)
    assert blocks == [TextContent(text="Say hello to Ada.")]
    assert acp_commands.expand([TextContent(text="/nope")], found) == [TextContent(text="/nope")]
