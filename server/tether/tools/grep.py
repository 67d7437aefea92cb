"""Grep: regex search over the workspace with ripgrep, or the pure-Python fallback.

Both backends return the same structures (``grep_python.FileHits``) and one renderer turns
them into text, so the answer does not depend on whether ``rg`` is installed. ripgrep is
asked for line numbers and NUL-separated paths whatever the request, which makes its output
unambiguous to parse; files are then ordered newest first (ties by path) and paths are
absolute in every mode.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.core.files import kind_of
from tether.core.tool_threads import ToolLane
from tether.errors import ToolError
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.tools.grep_python import (
    VCS_DIRS,
    FileHits,
    GrepLine,
    GrepQuery,
    can_match_newline,
)
from tether.tools.grep_worker import search_in_child
from tether.tools.names import shown_name
from tether.tools.paths import PathText, resolve_tool_path
from tether.tools.rg_watch import RipgrepStuck, watched

MAX_RG_OUTPUT = 64 * 1024 * 1024
_CONTENT_LINE = re.compile(rb"(\d+)([:-])")


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="Regular expression to search for (ripgrep syntax).")
    path: PathText | None = Field(
        default=None, description="File or directory to search (default: the workspace root)."
    )
    glob: str | None = Field(
        default=None,
        description='Only search files matching this glob, e.g. "*.py" or "*.{ts,tsx}".',
    )
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        default="files_with_matches",
        description='"content" shows matching lines, "files_with_matches" (default) lists files, '
        '"count" gives match counts per file.',
    )
    before: int | None = Field(
        default=None,
        alias="-B",
        ge=0,
        description="Lines of context before each match (content mode).",
    )
    after: int | None = Field(
        default=None,
        alias="-A",
        ge=0,
        description="Lines of context after each match (content mode).",
    )
    context: int | None = Field(
        default=None,
        alias="-C",
        ge=0,
        description="Lines of context around each match (content mode).",
    )
    line_numbers: bool | None = Field(
        default=None, alias="-n", description="Show line numbers (content mode; default true)."
    )
    ignore_case: bool | None = Field(
        default=None, alias="-i", description="Case-insensitive search."
    )
    type: str | None = Field(
        default=None, description='File type to search, e.g. "py", "js", "rust" (ripgrep types).'
    )
    head_limit: int | None = Field(
        default=None, ge=0, description="Only the first N lines / files / counts (0 = no limit)."
    )
    offset: int | None = Field(
        default=None, ge=0, description="Skip this many lines / files / counts before head_limit."
    )
    multiline: bool = Field(
        default=False, description="Let patterns span lines; `.` then also matches newlines."
    )


def split_globs(raw: str | None) -> tuple[str, ...]:
    """Several globs may come in one string, separated by spaces or commas (not inside {})."""
    globs: list[str] = []
    for part in (raw or "").split():
        globs.extend([part] if "{" in part and "}" in part else [g for g in part.split(",") if g])
    return tuple(globs)


MAX_PATTERN_CHARS = 64 * 1024
"""Longest pattern Grep takes (a command line argument holds at most 128 KB on Linux)."""


def _check_text(what: str, value: str) -> None:
    if "\0" in value:
        raise ToolError(f"The {what} contains a NUL character, which no file name can hold.")


def build_query(inp: GrepInput, root: Path) -> GrepQuery:
    if len(inp.pattern) > MAX_PATTERN_CHARS:
        raise ToolError(
            f"The pattern is {len(inp.pattern)} characters long, more than the "
            f"{MAX_PATTERN_CHARS} Grep takes. Search for a shorter, distinctive part of it."
        )
    for what, value in (("glob", inp.glob or ""), ("type", inp.type or "")):
        _check_text(what, value)
    content = inp.output_mode == "content"
    before = inp.context if inp.context is not None else inp.before or 0
    after = inp.context if inp.context is not None else inp.after or 0
    return GrepQuery(
        pattern=inp.pattern,
        root=root,
        mode=inp.output_mode,
        before=before if content else 0,
        after=after if content else 0,
        ignore_case=bool(inp.ignore_case),
        file_type=inp.type,
        globs=split_globs(inp.glob),
        multiline=inp.multiline,
    )


def ripgrep_args(q: GrepQuery) -> list[str]:
    # No user config, global or .git/info/exclude rules: the Python fallback cannot see them.
    args = ["--no-config", "--hidden", "--no-require-git", "--no-ignore-global"]
    args += ["--no-ignore-exclude", "--null", "--with-filename", "--no-heading"]
    args += ["--color", "never", "--max-columns", "500"]
    for d in VCS_DIRS:
        args += ["--glob", f"!{d}"]
    if q.multiline:
        args += ["-U", "--multiline-dotall"]
    if q.ignore_case:
        args.append("-i")
    if q.mode == "files_with_matches":
        args.append("-l")
    elif q.mode == "count":
        args.append("-c")
    else:
        args += ["-n", "-B", str(q.before), "-A", str(q.after)]
    if q.file_type:
        args += ["--type", q.file_type]
    for g in q.globs:
        args += ["--glob", g]
    pattern = q.pattern.replace("\0", "\\x00")  # an argument cannot hold a NUL; rg's escape
    args += ["-e", pattern] if pattern.startswith("-") else [pattern]
    return [*args, str(q.root)]


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(1 << 16):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_RG_OUTPUT:
            raise ToolError("The search produced too much output. Narrow the pattern or path.")
    return b"".join(chunks)


async def run_ripgrep(rg: str, q: GrepQuery, cwd: Path) -> bytes | None:
    """ripgrep's stdout, or None when nothing matched."""
    proc = await asyncio.create_subprocess_exec(
        rg,
        *ripgrep_args(q),
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout, proc.stderr

    async def read() -> tuple[bytes, bytes]:
        out, err = await asyncio.gather(_read_capped(stdout), stderr.read(1 << 16))
        await proc.wait()
        return out, err

    try:
        out, err = await watched(proc, read())
    finally:
        if proc.returncode is None:  # cancelled, or too much output
            proc.kill()
            await proc.wait()
    if proc.returncode == 1 or (proc.returncode == 2 and not out and not err):
        return None
    if proc.returncode == 2 and not out:
        raise ToolError(f"ripgrep failed: {err.decode('utf-8', 'replace').strip()}")
    return out


def parse_ripgrep(out: bytes, mode: str) -> dict[Path, FileHits]:
    hits: dict[Path, FileHits] = {}

    def entry(raw: bytes) -> FileHits:
        path = Path(os.fsdecode(raw))
        return hits.setdefault(path, FileHits(path, 0.0))

    if mode == "files_with_matches":
        for raw in out.split(b"\0"):
            if raw.strip(b"\n"):
                entry(raw.strip(b"\n"))
        return hits
    for raw_path, rest in _records(out):
        if mode == "count":
            entry(raw_path).count = int(rest)
            continue
        m = _CONTENT_LINE.match(rest)
        if m is None:
            continue
        text = rest[m.end() :].decode("utf-8", "replace")
        grep_line = GrepLine(int(m.group(1)), text, m.group(2) == b":")
        entry(raw_path).lines.append(grep_line)
    return hits


def _records(out: bytes) -> list[tuple[bytes, bytes]]:
    """``path NUL rest`` records of ripgrep's ``--null`` output, one a line: a path may
    hold a newline, so each record's path runs to its NUL, and the rest to the line's end.
    The ``--`` lines between context groups have no NUL."""
    records: list[tuple[bytes, bytes]] = []
    at, size = 0, len(out)
    while at < size:
        if out.startswith(b"--\n", at) or out.startswith(b"\n", at):
            at = out.index(b"\n", at) + 1
            continue
        nul = out.find(b"\0", at)
        if nul < 0:
            break
        end = out.find(b"\n", nul)
        end = size if end < 0 else end
        records.append((out[at:nul], out[nul + 1 : end]))
        at = end + 1
    return records


def _stat_mtimes(hits: dict[Path, FileHits]) -> list[FileHits]:
    for h in hits.values():
        try:
            h.mtime = h.path.stat().st_mtime
        except OSError:
            h.mtime = 0.0
    return list(hits.values())


@cache
def _which(name: str) -> str | None:
    return shutil.which(name)


async def search(q: GrepQuery, ripgrep: str | None, threads: ToolLane) -> list[FileHits]:
    rg = await threads.run(_which, ripgrep) if ripgrep else None
    if rg is None:  # the fallback's regex may backtrack for ever: a child process, killable
        return await search_in_child(q)
    cwd = q.root if await threads.run(q.root.is_dir) else q.root.parent
    try:
        out = await run_ripgrep(rg, q, cwd)
    except RipgrepStuck:  # an ignore file that is a FIFO or a device: the fallback answers
        return await search_in_child(q)
    if out is None:
        return []
    return await threads.run(_stat_mtimes, parse_ripgrep(out, q.mode))


def _content_lines(hits: list[FileHits], q: GrepQuery, numbers: bool) -> list[str]:
    lines: list[str] = []
    separate = q.before > 0 or q.after > 0
    for h in hits:
        previous: int | None = None
        for line in h.lines:
            if separate and lines and (previous is None or line.number != previous + 1):
                lines.append("--")
            sep = ":" if line.is_match else "-"
            number = f"{line.number}{sep}" if numbers else ""
            lines.append(f"{shown_name(str(h.path))}{sep}{number}{line.text}")
            previous = line.number
    return lines


def render(
    hits: list[FileHits],
    q: GrepQuery,
    *,
    line_numbers: bool,
    head_limit: int | None,
    offset: int,
    max_chars: int,
) -> str:
    """Text for the model; pagination applies to lines (content) or files (other modes)."""
    hits = sorted(hits, key=lambda h: (-h.mtime, str(h.path)))
    if q.mode == "content":
        entries = _content_lines(hits, q, line_numbers)
    elif q.mode == "count":
        entries = [f"{shown_name(str(h.path))}:{h.count}" for h in hits]
    else:
        entries = [shown_name(str(h.path)) for h in hits]
    end = offset + head_limit if head_limit else None
    page = entries[offset:end]
    if q.mode == "files_with_matches":
        head = f"Found {len(entries)} file{'' if len(entries) == 1 else 's'}"
        text = f"{head}\n" + "\n".join(page) if entries else "No files found"
    elif q.mode == "count":
        total = sum(h.count for h in hits)
        unit = "matches" if q.multiline and can_match_newline(q.pattern, True) else "matching lines"
        footer = f"Found {total} {unit} across {len(hits)} files."
        text = "\n".join(page) + f"\n\n{footer}" if entries else "No matches found"
    else:
        text = "\n".join(page) if entries else "No matches found"
    if entries and (head_limit or offset):
        text += f"\n\n[Showing entries {offset + 1}-{offset + len(page)} of {len(entries)}]"
    if len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars)
        text = text[: cut if cut > 0 else max_chars]
        text += (
            f"\n\n[Output cut at {max_chars} characters. Narrow the search, or page through "
            "it with head_limit and offset.]"
        )
    return text


def _kind(path: Path) -> str | None:
    try:
        return kind_of(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None


async def _call(inp: GrepInput, ctx: ToolContext) -> ToolResult:
    root = await ctx.threads.run(
        resolve_tool_path, inp.path or ".", ctx.cwd, ctx.readable_dirs, ctx.config.caller_env
    )
    kind = await ctx.threads.run(_kind, root)
    if kind is None:
        raise ToolError(f"Path does not exist: {root}.")
    if kind not in ("a regular file", "a directory"):
        raise ToolError(
            f"{root} is {kind}: Grep searches regular files and directories only "
            "(reading this could wait forever)."
        )
    q = build_query(inp, root)
    hits = await search(q, ctx.config.ripgrep, ctx.threads)
    numbers = inp.line_numbers if inp.line_numbers is not None else True
    text = render(
        hits,
        q,
        line_numbers=numbers,
        head_limit=inp.head_limit,
        offset=inp.offset or 0,
        max_chars=ctx.config.grep_max_chars,
    )
    return ToolResult(content=text)


async def _allow(_inp: GrepInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("allow")


def _always(_inp: GrepInput) -> bool:
    return True


GREP_TOOL: Tool[GrepInput] = build_tool(
    name="Grep",
    description=prompts.load("tools/Grep.md"),
    input_model=GrepInput,
    call=_call,
    kind="search",
    is_read_only=_always,
    is_concurrency_safe=_always,
    check_permissions=_allow,
    title=lambda inp: f"Search {inp.pattern!r}" + (f" in {inp.path}" if inp.path else ""),
    rule_content=lambda inp: inp.path or ".",
)
