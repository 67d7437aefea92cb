"""Read: a file's text with line numbers (from the editor's buffer when it is open), an
image or a PDF as the model API's own blocks, or a notebook's cells with their outputs.

Also home of the small helpers Write and Edit share: reading a document that may be missing,
and the "File does not exist" message with its "did you mean" hint.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.core.environ import expand_home
from tether.core.files import (
    MAX_TEXT_FILE_BYTES,
    FileTooLargeError,
    NotARegularFileError,
    kind_of,
    os_error_text,
)
from tether.editor.port import Document, reads_from_disk
from tether.errors import ToolError
from tether.protocol.updates import Location
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.tools.edit_match import format_numbered, split_lines
from tether.tools.paths import PathText, SymlinkSwapped, read_bytes_no_symlinks, resolve_tool_path
from tether.tools.read_lines import read_line_range

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
BINARY_EXTENSIONS = frozenset(
    {
        ".7z",
        ".a",
        ".avi",
        ".bin",
        ".bmp",
        ".bz2",
        ".class",
        ".db",
        ".dll",
        ".dmg",
        ".doc",
        ".docx",
        ".dylib",
        ".eot",
        ".exe",
        ".flac",
        ".gz",
        ".ico",
        ".iso",
        ".jar",
        ".lib",
        ".mkv",
        ".mov",
        ".mp3",
        ".mp4",
        ".o",
        ".obj",
        ".odt",
        ".ogg",
        ".otf",
        ".ppt",
        ".pptx",
        ".psd",
        ".pyc",
        ".pyo",
        ".rar",
        ".so",
        ".sqlite",
        ".sqlite3",
        ".tar",
        ".tgz",
        ".tif",
        ".tiff",
        ".ttf",
        ".war",
        ".wasm",
        ".wav",
        ".webm",
        ".whl",
        ".woff",
        ".woff2",
        ".xls",
        ".xlsx",
        ".xz",
        ".zip",
        ".zst",
    }
)
SNIFF_BYTES = 8192
MAX_NOTEBOOK_BYTES = 20_000_000
"""Notebooks carry their outputs' images as base64: far larger than code files."""


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: PathText = Field(description="Absolute path of the file to read.")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="1-based line number to start reading from. Only for files too long to "
        "read at once.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="How many lines to read. Only for files too long to read at once.",
    )
    pages: str | None = Field(
        default=None,
        description='Only for PDF files: the pages to read, e.g. "1-5" or "3" (at most 20 '
        "per call). Required for PDFs of more than 10 pages.",
    )


@dataclass(frozen=True)
class _Probe:
    exists: bool
    is_dir: bool = False
    size: int = 0
    head: bytes = b""


def _probe(path: Path) -> _Probe:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return _Probe(exists=False)
    except OSError as e:
        raise ToolError(f"Cannot read {path}: {os_error_text(e)}.")
    if stat.S_ISDIR(st.st_mode):
        return _Probe(exists=True, is_dir=True)
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(not_a_file_message(path, kind_of(st.st_mode)))
    try:
        # No symlink may have appeared on the way since the path was checked.
        head = read_bytes_no_symlinks(path, SNIFF_BYTES)
    except SymlinkSwapped as e:
        raise ToolError(f"{path} changed into a symbolic link after it was checked ({e}).")
    except NotARegularFileError as e:
        raise ToolError(not_a_file_message(path, e.kind))
    except OSError as e:
        raise ToolError(f"Cannot open {path}: {e.strerror or e}.")
    return _Probe(exists=True, size=st.st_size, head=head)


def _located(
    raw: str, cwd: Path, readable: list[Path], caller: Mapping[str, str] | None
) -> tuple[Path, _Probe]:
    """The path a Read names, confined (``resolve_tool_path``), and what is there."""
    path = resolve_tool_path(raw, cwd, readable, caller)
    return path, _probe(path)


def not_a_file_message(path: Path, kind: str) -> str:
    return (
        f"{path} is {kind}, not a regular file. File tools only read and write regular "
        "files: reading this could wait forever or never end."
    )


async def read_document(ctx: ToolContext, path: Path) -> Document | None:
    """The document as the editor sees it, or None when there is no such file."""
    try:
        return await ctx.editor.read(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory, not a file.")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not UTF-8 text; only text files can be read or edited.")
    except PermissionError:
        raise ToolError(f"Permission denied: {path}.")
    except NotARegularFileError as e:
        raise ToolError(not_a_file_message(path, e.kind))
    except SymlinkSwapped as e:
        raise ToolError(f"{path} changed into a symbolic link after it was checked ({e}).")
    except FileTooLargeError as e:
        raise ToolError(
            f"{path} is {e.size} bytes, more than the {e.limit} Tether reads whole to edit or "
            "write a file. Read it in parts with offset and limit; change it with Bash "
            "(sed, a script) if it must change."
        )
    except OSError as e:
        raise ToolError(f"Cannot read {path}: {e.strerror or e}.")


def _similar_file(path: Path) -> Path | None:
    try:
        names = os.listdir(path.parent)
    except OSError:
        return None
    same_stem = sorted(n for n in names if Path(n).stem == path.stem and n != path.name)
    if same_stem:
        return path.parent / same_stem[0]
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.75)
    return path.parent / close[0] if close else None


async def missing_file_message(path: Path, cwd: Path) -> str:
    message = f"File does not exist: {path}. The workspace root is {cwd}."
    similar = await asyncio.to_thread(_similar_file, path)
    if similar is not None:
        message += f" Did you mean {similar}?"
    return message


def _cut(line: str, max_chars: int) -> str:
    return _cut_note(line[:max_chars], max(0, len(line) - max_chars))


def _reminder(text: str) -> str:
    return f"<system-reminder>{text}</system-reminder>"


def render_lines(doc: Document, inp: ReadInput, ctx: ToolContext) -> tuple[str, bool]:
    """The numbered text for the requested range, and whether it is only part of the file."""
    cfg = ctx.config
    whole = inp.offset is None and inp.limit is None
    if whole and len(doc.text) > cfg.read_max_bytes:
        raise ToolError(
            f"The file has {len(doc.text)} characters, more than the {cfg.read_max_bytes} that "
            "can be read at once. Read it in parts with offset and limit, or search it with Grep."
        )
    lines = split_lines(doc.text)
    start = max(1, inp.offset or 1)
    end = min(len(lines), start - 1 + (inp.limit or cfg.read_max_lines))
    shown = [_cut(x, cfg.read_max_line_chars) for x in lines[start - 1 : end]]
    return render_range(shown, start, len(lines), inp, ctx)


def render_range(
    shown: list[str], start: int, total: int | None, inp: ReadInput, ctx: ToolContext
) -> tuple[str, bool]:
    """``shown`` (lines ``start``.. of a file of ``total`` lines, already cut; None: more
    lines follow, uncounted) numbered, and whether that is only part of the file."""
    cfg = ctx.config
    whole = inp.offset is None and inp.limit is None
    if total == 0:
        return _reminder("The file exists but is empty."), False
    if total is not None and start > total:
        note = f"The file has only {total} lines; offset {start} is past its end."
        return _reminder(note), True
    end = start - 1 + len(shown)
    body = format_numbered(shown, start)
    if not whole and len(body) > cfg.read_max_bytes:
        raise ToolError(
            f"Lines {start}-{end} come to {len(body)} characters, more than the "
            f"{cfg.read_max_bytes} that can be read at once. Use a smaller limit."
        )
    if total is None:
        if inp.limit is None:
            body += "\n\n" + _reminder(
                f"Showing lines {start}-{end} of a file too large to count its lines. "
                f"Continue with offset={end + 1} to read more."
            )
        return body, True
    partial = start > 1 or end < total
    if end < total and inp.limit is None:
        body += "\n\n" + _reminder(
            f"Showing lines {start}-{end} of {total}. Continue with offset={end + 1} to read more."
        )
    return body, partial


async def _read_part_from_disk(inp: ReadInput, ctx: ToolContext, path: Path) -> ToolResult:
    """Lines of a file no buffer holds, streamed from disk: memory stays flat whatever the
    file's size, and a file too large to edit is read no further than the lines asked for."""
    cfg = ctx.config
    start = max(1, inp.offset or 1)
    count = inp.limit or cfg.read_max_lines
    max_chars = cfg.read_max_line_chars
    try:
        part = await ctx.threads.run_stoppable(
            lambda stop: read_line_range(
                path, start, count, max_chars, hash_limit=MAX_TEXT_FILE_BYTES, stop=stop
            )
        )
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not UTF-8 text; only text files can be read or edited.")
    except FileNotFoundError:
        raise ToolError(await missing_file_message(path, ctx.cwd))
    except NotARegularFileError as e:
        raise ToolError(not_a_file_message(path, e.kind))
    except SymlinkSwapped as e:
        raise ToolError(f"{path} changed into a symbolic link after it was checked ({e}).")
    except OSError as e:
        raise ToolError(f"Cannot read {path}: {e.strerror or e}.")
    shown = [_cut_note(line, cut) for line, cut in zip(part.lines, part.cut, strict=True)]
    text, _partial = render_range(shown, start, part.total, inp, ctx)
    if part.hash is not None:  # else too large for Edit or Write: nothing to compare
        ctx.files.record_hash(path, part.hash, partial=True)
    return ToolResult(content=text)


def _cut_note(line: str, cut: int) -> str:
    return f"{line}… [line cut: {cut} more characters]" if cut else line


async def _call(inp: ReadInput, ctx: ToolContext) -> ToolResult:
    # One trip to a tool thread for both (each trip is two wake-ups of the loop).
    path, probe = await ctx.threads.run(
        _located, inp.file_path, ctx.cwd, ctx.readable_dirs, ctx.config.caller_env
    )
    if probe.is_dir:
        raise ToolError(
            f"{path} is a directory. Use Glob to find files in it, or Bash with `ls` to list it."
        )
    suffix = path.suffix.lower()
    if inp.pages is not None and suffix != ".pdf":
        raise ToolError("The pages parameter is only for PDF files; use offset and limit.")
    # Pillow, pypdf and nbformat load on first use: they would slow every daemon start.
    if probe.exists and suffix in IMAGE_EXTENSIONS:
        from tether.tools.read_media import read_image

        return await read_image(path, probe.size)
    if probe.exists and suffix == ".pdf":
        from tether.tools.read_media import read_pdf

        return await read_pdf(path, probe.size, inp.pages)
    if probe.exists and (suffix in BINARY_EXTENSIONS or b"\x00" in probe.head):
        raise ToolError(
            f"{path} is a binary file ({suffix or 'no extension'}); Read only shows text files, "
            "images (png, jpg, gif, webp), PDFs and notebooks."
        )
    whole = inp.offset is None and inp.limit is None
    notebook = suffix == ".ipynb" and whole
    if notebook and probe.size > MAX_NOTEBOOK_BYTES:
        raise ToolError(
            f"The notebook is {probe.size} bytes, more than the {MAX_NOTEBOOK_BYTES} that can "
            "be read at once. Read its JSON in parts with offset and limit."
        )
    if whole and not notebook and probe.size > ctx.config.read_max_bytes:
        raise ToolError(
            f"The file is {probe.size} bytes, more than the {ctx.config.read_max_bytes} that can "
            "be read at once. Read it in parts with offset and limit, or search it with Grep."
        )
    if probe.exists and not whole and not notebook and reads_from_disk(ctx.editor, path):
        return await _read_part_from_disk(inp, ctx, path)
    doc = await read_document(ctx, path)
    if doc is None:
        raise ToolError(await missing_file_message(path, ctx.cwd))
    if notebook:
        # Cells with their outputs; NotebookEdit may then change them.
        from tether.tools.notebook_io import parse_notebook, render_notebook

        parts = render_notebook(parse_notebook(doc.text, str(path)))
        ctx.files.record(doc)
        return ToolResult(content=parts)
    text, partial = render_lines(doc, inp, ctx)
    ctx.files.record(doc, partial=partial or not whole)
    return ToolResult(content=text)


async def _allow(_inp: ReadInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("allow")


def file_uri(raw: str, cwd: Path, caller: Mapping[str, str] | None = None) -> str:
    """URI of a path the model gave, by path arithmetic only (no I/O: runs on the loop);
    ``~`` is the ``caller``'s home (None: this process's)."""
    return Path(os.path.normpath(cwd / expand_home(raw, caller))).as_uri()


def _locations(inp: ReadInput, ctx: ToolContext) -> list[Location]:
    return [Location(uri=file_uri(inp.file_path, ctx.cwd, ctx.config.caller_env), line=inp.offset)]


def _always(_inp: ReadInput) -> bool:
    return True


READ_TOOL: Tool[ReadInput] = build_tool(
    name="Read",
    description=prompts.load("tools/Read.md"),
    input_model=ReadInput,
    call=_call,
    kind="read",
    is_read_only=_always,
    is_concurrency_safe=_always,
    check_permissions=_allow,
    title=lambda inp: f"Read {inp.file_path}",
    locations=_locations,
    rule_content=lambda inp: inp.file_path,
)
