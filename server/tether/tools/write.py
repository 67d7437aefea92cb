"""Write: create a file or replace its whole text, through the editor, never over unseen changes.

An existing file must have been read first and must still be what the agent read: a blind
overwrite would drop whatever the user or a formatter changed since. The write itself is
versioned against the text read just now, so a keystroke between check and write turns into a
Conflict, not into lost user text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from tether.editor.port import Conflict, Document, Unconfirmed
from tether.errors import ToolError
from tether.tools.base import Tool, ToolResult
from tether.tools.context import ToolContext, text_hash
from tether.tools.edit_match import snippet, split_lines, uses_crlf
from tether.tools.file_write import (
    FileInput,
    diff_of,
    file_tool,
    refuse_unconfirmed,
    unconfirmed_result,
    write_change,
)
from tether.tools.paths import PathText, resolve_tool_path
from tether.tools.read import read_document

NOT_READ = "The file already exists and has not been read yet. Read it first, then write it."
CHANGED = (
    "The file has changed since you last read it (the user or a tool such as a formatter "
    "modified it). Read it again before writing it."
)


class WriteInput(FileInput):
    file_path: PathText = Field(
        description="Absolute path of the file to write (created if missing)."
    )
    content: str = Field(description="The complete new content of the file.")


@dataclass(frozen=True)
class WritePlan:
    path: Path
    base: Document | None
    """The document as read just before writing; None when the file does not exist."""
    new_text: str


async def plan_write(inp: WriteInput, ctx: ToolContext) -> WritePlan:
    """Check the read-before-write rules and work out the exact text to write."""
    path = await ctx.threads.run(
        resolve_tool_path, inp.file_path, ctx.cwd, ctx.allowed_dirs, ctx.config.caller_env
    )
    base = await read_document(ctx, path)
    text = inp.content
    if base is not None:
        record = ctx.files.get(path)
        if record is None:
            raise ToolError(NOT_READ)
        refuse_unconfirmed(ctx, path)
        if record.hash != text_hash(base.text):
            raise ToolError(CHANGED)
        if uses_crlf(base.text):
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return WritePlan(path, base, text)


def changed_lines(old: str, new: str) -> tuple[int, int]:
    """1-based first and last line of ``new`` that differ from ``old``."""
    a, b = split_lines(old), split_lines(new)
    first = 0
    while first < min(len(a), len(b)) and a[first] == b[first]:
        first += 1
    tail = 0
    while tail < min(len(a), len(b)) - first and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return first + 1, max(first + 1, len(b) - tail)


def conflict_message(conflict: Conflict) -> str:
    return (
        f"Nothing was written: {conflict.reason}. The editor may hold changes the user is "
        "making right now. Read the file again, then retry."
    )


async def _call(inp: WriteInput, ctx: ToolContext) -> ToolResult:
    plan = await plan_write(inp, ctx)
    outcome = await write_change(ctx, plan, "Write")
    if isinstance(outcome, Unconfirmed):
        return unconfirmed_result(ctx, plan, outcome)
    if isinstance(outcome, Conflict):
        now = outcome.current
        if now is None or now.text != plan.new_text:
            raise ToolError(conflict_message(outcome))
        written = now  # someone already put exactly this text there
    else:
        written = outcome.document
    ctx.files.record(written)
    display = diff_of(plan)
    if plan.base is None:
        return ToolResult(content=f"File created successfully at: {plan.path}", display=[display])
    first, last = changed_lines(plan.base.text, written.text)
    text = f"The file {plan.path} has been updated. The changed region now reads:\n" + snippet(
        written.text, first, last, context=2, max_lines=30
    )
    return ToolResult(content=text, display=[display])


WRITE_TOOL: Tool[WriteInput] = file_tool(
    "Write", WriteInput, plan_write, _call, lambda i: i.file_path
)
