"""Project instructions: AGENTS.md / CLAUDE.md (and their ``.local`` variants) in the
workspace and its parents, plus the user's global file, with ``@path`` imports.

Imports resolve relative to the importing file, are ignored inside code spans and fences,
stop at a depth limit, refuse cycles, and may only reach files inside the workspace or the
user's config directory; every refusal leaves a visible note instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from tether.core.environ import expand_home
from tether.core.files import FileTooLargeError, read_regular_text

MAX_DEPTH = 5
MAX_FILE_CHARS = 40_000
MAX_FILE_BYTES = 1 << 20
"""Larger instruction files are left out (with a note saying so), never read whole."""
NAMES = ("AGENTS.md", "AGENTS.local.md", "CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
_IMPORT = re.compile(r"(?<![\w`])@((?:~|\.{1,2})?/?[\w.\-/]+\.[\w]+)")
_FENCE = re.compile(r"^(```|~~~)")


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    scope: str
    """``user``, ``project`` or ``local``."""
    text: str


def user_instructions_path() -> Path:
    return platformdirs.user_config_path("tether", appauthor=False) / "AGENTS.md"


def _allowed_roots(root: Path) -> list[Path]:
    return [root.resolve(), platformdirs.user_config_path("tether", appauthor=False).resolve()]


def expand_imports(
    text: str,
    base: Path,
    roots: list[Path],
    chain: tuple[Path, ...] = (),
    caller: Mapping[str, str] | None = None,
) -> str:
    """``@path`` imports expanded (``@~/…``: the ``caller``'s home; None: this process's)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
        if fenced or "@" not in line:
            out.append(line)
            continue
        out.append(_expand_line(line, base, roots, chain, caller))
    return "".join(out)


def _expand_line(
    line: str,
    base: Path,
    roots: list[Path],
    chain: tuple[Path, ...],
    caller: Mapping[str, str] | None,
) -> str:
    pieces = line.split("`")
    for i in range(0, len(pieces), 2):  # even pieces are outside inline code spans
        pieces[i] = _IMPORT.sub(
            lambda m: _import(m.group(1), base, roots, chain, caller), pieces[i]
        )
    return "`".join(pieces)


def _import(
    raw: str,
    base: Path,
    roots: list[Path],
    chain: tuple[Path, ...],
    caller: Mapping[str, str] | None,
) -> str:
    target = Path(expand_home(raw, caller))
    path = (target if target.is_absolute() else base.parent / target).resolve()
    if len(chain) >= MAX_DEPTH:
        return f"@{raw} (not imported: more than {MAX_DEPTH} levels deep)"
    if path in chain or path == base.resolve():
        return f"@{raw} (not imported: import cycle)"
    if not any(path == r or path.is_relative_to(r) for r in roots):
        return f"@{raw} (not imported: outside the workspace)"
    try:
        text = read_regular_text(path, max_bytes=MAX_FILE_BYTES)[:MAX_FILE_CHARS]
    except FileTooLargeError:
        return f"@{raw} (not imported: larger than {MAX_FILE_BYTES} bytes)"
    except (OSError, UnicodeDecodeError):
        return f"@{raw} (not imported: not readable)"
    body = expand_imports(text, path, roots, (*chain, base.resolve()), caller)
    return f'\n<imported path="{path}">\n{body.strip()}\n</imported>\n'


def _read(
    path: Path, scope: str, roots: list[Path], caller: Mapping[str, str] | None
) -> InstructionFile | None:
    try:
        text = read_regular_text(path, max_bytes=MAX_FILE_BYTES)
    except FileTooLargeError as e:
        note = (
            f"[{path} is {e.size} bytes, more than the {MAX_FILE_BYTES} Tether reads as "
            "instructions: it was left out. Shorten it, or split it and import the parts.]"
        )
        return InstructionFile(path, scope, note)
    except (OSError, UnicodeDecodeError):
        return None
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n[... cut at {MAX_FILE_CHARS} characters ...]\n"
    return InstructionFile(path, scope, expand_imports(text, path, roots, (), caller))


def load_instructions(
    root: Path, user_file: Path | None = None, caller: Mapping[str, str] | None = None
) -> list[InstructionFile]:
    """The user's global file first, then each directory from the filesystem root down to
    the workspace (the most specific last, so it reads as the one that wins); ``caller``:
    whose home ``@~/…`` imports name (None: this process's)."""
    root = root.resolve()
    roots = _allowed_roots(root)
    found: list[InstructionFile] = []
    user = user_file if user_file is not None else user_instructions_path()
    if user.is_file():
        item = _read(user, "user", roots, caller)
        if item is not None:
            found.append(item)
    for directory in [*reversed(root.parents), root]:
        for name in NAMES:
            path = directory / name
            if path.is_file():
                scope = "local" if ".local." in name else "project"
                item = _read(path, scope, roots, caller)
                if item is not None:
                    found.append(item)
    return found


def instructions_section(files: list[InstructionFile]) -> str:
    if not files:
        return ""
    parts = [
        "# Instructions from the user and the project\nFollow these; later files are more specific."
    ]
    for item in files:
        label = {"user": "the user's global instructions", "local": "private project instructions"}
        kind = label.get(item.scope, "project instructions, checked into the codebase")
        parts.append(f"Contents of {item.path} ({kind}):\n\n{item.text.strip()}")
    return "\n\n".join(parts)
