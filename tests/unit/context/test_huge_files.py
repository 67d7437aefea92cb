"""Files the daemon reads on its own (instructions, skills, commands, memory) or to edit
are size-checked before they are read: an 8 GB file costs a stat, never its size in memory,
and the reason is said where someone will read it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tether.context.instructions import MAX_FILE_BYTES, load_instructions
from tether.context.memory import load_index, memory_attachment
from tether.skills import commands
from tether.skills.registry import SkillRegistry

HUGE = 8 << 30


def sparse(path: Path, head: str, size: int = HUGE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(head.encode())
        f.truncate(size)
    return path


def bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.fixture
def cheap() -> Callable[[], None]:
    """Fails when more than a few MB were read since it was made."""
    start = bytes_read()

    def check() -> None:
        assert bytes_read() - start < 8 << 20, "a huge file was read"

    return check


def test_a_huge_instruction_file_is_left_out_with_a_note(
    tmp_path: Path, cheap: Callable[[], None]
) -> None:
    root = tmp_path / "ws"
    sparse(root / "CLAUDE.md", "Use tabs.\n")
    (root / "AGENTS.md").write_text("Run the tests. @CLAUDE.md\n")
    files = load_instructions(root, user_file=tmp_path / "none.md")
    cheap()
    text = "\n".join(f.text for f in files)
    assert f"is {HUGE} bytes, more than the {MAX_FILE_BYTES}" in text and "Shorten it" in text
    assert "Run the tests." in text and "(not imported: larger than" in text


def test_huge_skills_commands_and_memory_are_skipped_saying_why(
    tmp_path: Path, cheap: Callable[[], None]
) -> None:
    sparse(tmp_path / ".tether/skills/big/SKILL.md", "---\ndescription: big\n---\nBody\n")
    sparse(tmp_path / ".tether/commands/huge.md", "Do it.\n")
    (tmp_path / ".tether/commands/small.md").write_text("Do a little.\n")
    registry = SkillRegistry(tmp_path, dirs=[tmp_path / ".tether/skills"])
    found = commands.discover(tmp_path, dirs=[tmp_path / ".tether/commands"], skills=registry)
    cheap()
    assert [c.name for c in found] == ["small"]
    (problem,) = registry.problems
    assert "SKILL.md" in problem and f"is {HUGE} bytes" in problem
    index = sparse(tmp_path / "memory" / "MEMORY.md", "- [Big](big.md) - a big one\n")
    sparse(tmp_path / "memory" / "big.md", "remember this\n")
    loaded = load_index(index)
    assert memory_attachment(loaded.entries) == ""
    cheap()
