"""Glob: files matching a pattern, newest first (the walk it falls back on is ``walk.py``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.core.tool_threads import ToolLane
from tether.errors import ToolError
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.tools.glob_ripgrep import Listed, list_files, which
from tether.tools.names import shown_name
from tether.tools.paths import PathText, resolve_tool_path
from tether.tools.walk import Prefilter, WalkedFile, walk_files

__all__ = ["GLOB_TOOL", "Prefilter", "WalkedFile", "glob_walk", "walk_files"]


MAX_BRACE_DEPTH = 32


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate a shell glob: ``*`` and ``?`` stay in one path segment, ``**/`` spans any
    number of directories, ``[...]`` is a class, ``{a,b}`` alternatives."""
    out: list[str] = []
    i, depth, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            at_segment_start = i == 0 or pattern[i - 1] == "/"
            if at_segment_start and pattern.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
            else:
                out.append(".*")
                i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close]
            neg = body[0] in "!^"
            body = body[1:] if neg else body
            out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
            i = close
        elif c == "{":
            depth += 1
            if depth > MAX_BRACE_DEPTH:
                raise ToolError(
                    f"The pattern has braces nested more than {MAX_BRACE_DEPTH} deep; "
                    "no file name needs that. Simplify it."
                )
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out) + ")" * depth + r"\Z", re.DOTALL)
    except (re.error, RecursionError, OverflowError) as e:
        raise ToolError(f"The pattern cannot be used: {e}.") from None


def split_static_prefix(pattern: str) -> tuple[str, str]:
    """``src/lib/**/*.py`` -> (``src/lib``, ``**/*.py``): walk only where matches can be."""
    parts = pattern.split("/")
    static: list[str] = []
    for part in parts[:-1]:
        if any(ch in part for ch in "*?[{"):
            break
        static.append(part)
    rest = "/".join(parts[len(static) :])
    return "/".join(static) or ("/" if pattern.startswith("/") else ""), rest


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: PathText = Field(description='Glob pattern to match files against, e.g. "**/*.py".')
    path: PathText | None = Field(
        default=None,
        description="Directory to search in (default: the workspace root). Omit it rather "
        'than passing "null" or "undefined".',
    )


def _check_dir(base: Path) -> None:
    if not base.is_dir():
        state = "is not a directory" if base.exists() else "does not exist"
        raise ToolError(f"{base} {state}.")


def glob_walk(base: Path) -> list[WalkedFile]:
    """Every file Glob can answer with under ``base``, by the pure-Python walk."""
    return list(walk_files(base, prefilter=_skip_git))


async def find_files(
    base: Path, pattern: str, ripgrep: str | None, threads: ToolLane
) -> list[Listed]:
    """Files under ``base`` matching ``pattern``: listed by ripgrep when it is there, else
    by the walk (both give the same files)."""
    await threads.run(_check_dir, base)
    regex = glob_to_regex(pattern)
    rg = await threads.run(which, ripgrep) if ripgrep else None
    listed = await list_files(rg, base, threads, regex.match) if rg else None
    if listed is not None:
        return listed
    walked = await threads.run(glob_walk, base)
    return [Listed(f.mtime, str(f.path), f.rel) for f in walked if regex.match(f.rel)]


def _skip_git(rel: str, is_dir: bool) -> bool | None:
    return False if is_dir and (rel == ".git" or rel.endswith("/.git")) else None


async def _call(inp: GlobInput, ctx: ToolContext) -> ToolResult:
    if not inp.pattern.strip():
        raise ToolError("The pattern is empty.")
    static, pattern = split_static_prefix(inp.pattern)
    where = os.path.join(inp.path or ".", static) if static else inp.path or "."
    base = await ctx.threads.run(
        resolve_tool_path, where, ctx.cwd, ctx.allowed_dirs, ctx.config.caller_env
    )
    files = await find_files(base, pattern or "*", ctx.config.ripgrep, ctx.threads)
    if not files:
        return ToolResult(content="No files found")
    files.sort(key=lambda f: (-f.mtime, f.path))
    cap = ctx.config.glob_max_results
    lines = [shown_name(f.path) for f in files[:cap]]
    if len(files) > cap:
        lines.append(
            f"(Showing the {cap} most recently modified of {len(files)} matches. "
            "Use a more specific path or pattern to see the rest.)"
        )
    return ToolResult(content="\n".join(lines))


async def _allow(_inp: GlobInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("allow")


def _always(_inp: GlobInput) -> bool:
    return True


GLOB_TOOL: Tool[GlobInput] = build_tool(
    name="Glob",
    description=prompts.load("tools/Glob.md"),
    input_model=GlobInput,
    call=_call,
    kind="search",
    is_read_only=_always,
    is_concurrency_safe=_always,
    check_permissions=_allow,
    title=lambda inp: f"Find {inp.pattern}" + (f" in {inp.path}" if inp.path else ""),
    rule_content=lambda inp: inp.path or ".",
)
