"""Skills: reusable prompt packages (``<dir>/<name>/SKILL.md`` plus any bundled files).

Looked up in ``.tether/skills``, ``.claude/skills`` and the user's ``skills`` folder
(``~/.config/tether/skills``); on a name clash the first wins (workspace over user).

Progressive disclosure: only names and descriptions sit in the system prompt (within a
budget); the body loads on demand (the ``Skill`` tool, or ``/name``). A skill with
``paths`` is not listed up front: it is offered when a file matching its patterns is read
or edited, which keeps the listing short and the offer timely.
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec
import platformdirs

from tether.core.files import read_regular_text
from tether.skills.frontmatter import as_list, as_text, split

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 1536
"""Characters of a description listed in the prompt (Claude Code's cap)."""
LISTING_BUDGET = 8000
"""Characters for the whole listing: about 1% of a 200k-token window."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
_POSITIONAL = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$(\d+)")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path
    """The SKILL.md file; its folder holds any bundled files."""
    allowed_tools: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    model_invocable: bool = True
    user_invocable: bool = True
    argument_hint: str | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent

    def matches(self, relative: str) -> bool:
        return bool(self.paths) and _spec(self.paths).match_file(relative)

    def render(self, args: str = "") -> str:
        """The body with arguments and the skill folder substituted."""
        body = substitute(self.body, args, zero_based=True)
        for var in ("${CLAUDE_SKILL_DIR}", "${TETHER_SKILL_DIR}"):
            body = body.replace(var, str(self.folder))
        return body.strip()


def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def split_args(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:  # an unbalanced quote: still better than nothing
        return args.split()


def substitute(body: str, args: str, *, zero_based: bool) -> str:
    """``$ARGUMENTS`` (all), ``$ARGUMENTS[N]`` (0-based) and ``$N`` (0-based for skills,
    1-based for commands, as in Claude Code). Without any placeholder, arguments are
    appended so they are never lost."""
    words = split_args(args)
    used = "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None

    def positional(m: re.Match[str]) -> str:
        index = int(m.group(1)) if m.group(1) is not None else int(m.group(2))
        if m.group(2) is not None and not zero_based:
            index -= 1
        return words[index] if 0 <= index < len(words) else ""

    out = _POSITIONAL.sub(positional, body).replace("$ARGUMENTS", args)
    if not used and args.strip():
        out = out.rstrip() + f"\n\nARGUMENTS: {args.strip()}"
    return out


def skill_dirs(root: Path) -> list[Path]:
    user = platformdirs.user_config_path("tether", appauthor=False) / "skills"
    return [root / ".tether" / "skills", root / ".claude" / "skills", user]


MAX_FILE_BYTES = 1 << 20
"""Largest skill or command file read (a bigger one is skipped, the reason in ``problems``)."""


def parse_skill(path: Path) -> Skill:
    """Raises ValueError (or OSError) for a file that is not a usable skill."""
    fields, body = split(read_regular_text(path, max_bytes=MAX_FILE_BYTES), str(path))
    name = as_text(fields.get("name")) or path.parent.name
    if not _NAME.fullmatch(name):
        raise ValueError(f"the name {name!r} is not a valid skill name")
    description = " ".join(as_text(fields.get("description")).split())
    if not description:
        first = next((ln.strip("# ").strip() for ln in body.splitlines() if ln.strip()), "")
        description = first[:200]
    if not body.strip():
        raise ValueError("the skill has no body")
    return Skill(
        name=name,
        description=description,
        body=body,
        path=path,
        allowed_tools=tuple(as_list(fields.get("allowed-tools"))),
        paths=tuple(as_list(fields.get("paths"))),
        model_invocable=fields.get("disable-model-invocation") is not True,
        user_invocable=fields.get("user-invocable") is not False,
        argument_hint=as_text(fields.get("argument-hint")) or None,
    )


class SkillRegistry:
    """The skills of one workspace, read once (``reload()`` reads them again)."""

    def __init__(self, root: Path, *, dirs: Sequence[Path] | None = None) -> None:
        self.root = root
        self.dirs = list(dirs) if dirs is not None else skill_dirs(root)
        self.skills: dict[str, Skill] = {}
        self.problems: list[str] = []
        self.reload()

    def reload(self) -> None:
        self.skills, self.problems = {}, []
        for folder in self.dirs:
            try:
                candidates = sorted(folder.glob("*/SKILL.md"))
            except OSError:
                continue
            for path in candidates:
                try:
                    skill = parse_skill(path)
                except (OSError, UnicodeDecodeError, ValueError) as e:
                    self.problems.append(f"{path}: {e}")
                    log.warning("skill %s skipped: %s", path, e)
                    continue
                self.skills.setdefault(skill.name, skill)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name.removeprefix("/"))

    @property
    def invocable(self) -> list[Skill]:
        """Skills the model may load with the Skill tool."""
        return [s for s in self.skills.values() if s.model_invocable]

    def prompt_section(self, budget: int = LISTING_BUDGET) -> str:
        """The listing for the system prompt: names and descriptions, no bodies."""
        listed = [s for s in self.invocable if not s.paths]
        if not listed:
            return ""
        lines = [
            "# Skills",
            "Skills are instructions for specific tasks. When a task matches a skill's "
            "description, load it with the Skill tool before starting, then follow it.",
        ]
        used = sum(len(line) + 1 for line in lines)
        for skill in listed:
            line = f"- {skill.name}: {skill.description[:MAX_DESCRIPTION]}"
            if used + len(line) + 1 > budget:
                lines.append(f"- (more skills: {len(listed) - len(lines) + 2} not listed)")
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the workspace (as ``paths`` patterns are), or None."""
        for root in (self.root, self.root.resolve()):
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return None

    def offer_for(self, paths: Iterable[Path], exclude: Iterable[str] = ()) -> list[Skill]:
        """Skills with ``paths`` patterns that match any of ``paths`` (files touched)."""
        skip = set(exclude)
        relative = [r for r in map(self.relative, paths) if r is not None]
        return [
            s
            for s in self.invocable
            if s.paths and s.name not in skip and any(s.matches(r) for r in relative)
        ]
