"""Offering skills whose ``paths`` match the files the agent reads or edits.

At each turn boundary (after the tool phase) the session looks at the files its tools
read or wrote since the last boundary, and offers the matching skills it has not offered
yet, as a reminder attachment. The offer names the skill and why; loading it is still the
model's call (the Skill tool), so an offer never costs more than a few lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tether.core.messages import Message, TextBlock
from tether.skills.registry import Skill, SkillRegistry
from tether.tools.context import FileState, ReadRecord


def offer_text(skills: Sequence[Skill], shown: Sequence[str]) -> str:
    lines = [
        "<system-reminder>",
        "These skills apply to files you just worked on ("
        + ", ".join(shown[:5])
        + (", ..." if len(shown) > 5 else "")
        + "). Load one with the Skill tool when it fits the task:",
    ]
    lines += [f"- {s.name}: {s.description}" for s in skills]
    lines.append("</system-reminder>")
    return "\n".join(lines)


class SkillOffers:
    """One session's offers. Callable as an engine attachment source."""

    def __init__(self, registry: SkillRegistry, files: FileState) -> None:
        self.registry = registry
        self.files = files
        self.offered: set[str] = set()
        # Files already known (a resumed session) are not news.
        self._seen: dict[Path, ReadRecord | None] = {p: files.get(p) for p in files.paths()}

    def touched(self) -> list[Path]:
        """Files read or written since the last call."""
        changed: list[Path] = []
        for path in self.files.paths():
            record = self.files.get(path)
            if self._seen.get(path, None) != record or path not in self._seen:
                changed.append(path)
                self._seen[path] = record
        return changed

    def offer_for(self, paths: Sequence[Path]) -> Message | None:
        """The offer for ``paths`` (files touched), or None; each skill is offered once."""
        if not paths:
            return None
        skills = self.registry.offer_for(paths, exclude=self.offered)
        if not skills:
            return None
        self.offered.update(s.name for s in skills)
        relative = [r for r in map(self.registry.relative, paths) if r is not None]
        text = offer_text(skills, [r for r in relative if any(s.matches(r) for s in skills)])
        return Message(role="user", content=[TextBlock(text=text)])

    async def __call__(self) -> list[Message]:
        offer = self.offer_for(self.touched())
        return [offer] if offer is not None else []
