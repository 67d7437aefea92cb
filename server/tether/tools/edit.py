"""Edit: replace an exact string in a file, through the editor, re-matching instead of clobbering.

The file must have been read first. If it changed since (the user typed, a formatter ran),
the edit is not refused outright: ``old_string`` is matched again on the current text and
applied when it is still unique. The write is versioned against the text just matched; when
the editor reports a Conflict (a keystroke landed in between) the match is redone on the new
text, a few times at most. User text is never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from tether.editor.port import Conflict, Document, Unconfirmed, Written
from tether.errors import ToolError
from tether.tools.base import Tool, ToolResult
from tether.tools.context import ToolContext, text_hash
from tether.tools.diff_view import diff_content
from tether.tools.edit_match import Ambiguous, NotFound, replace, snippet
from tether.tools.file_write import (
    FileInput,
    file_tool,
    refuse_unconfirmed,
    unconfirmed_result,
    write_change,
)
from tether.tools.paths import PathText, resolve_tool_path
from tether.tools.read import missing_file_message, read_document

MAX_CONFLICT_RETRIES = 3
NO_CHANGE = "No changes to make: old_string and new_string are identical."
NOT_READ = "The file has not been read yet. Read it first, then edit it."
STALE_NOTE = (
    "Note: the file had changed since you last read it; old_string still matched exactly "
    "once in the current text, so the edit was applied there."
)
STALE_NOTE_ALL = (
    "Note: the file had changed since you last read it; old_string was matched again on the "
    "current text ({} occurrences replaced)."
)
RETRY_NOTE = (
    "Note: the file changed while the edit was being applied (the user may be typing); "
    "old_string was matched again on the new text."
)


class EditInput(FileInput):
    file_path: PathText = Field(description="Absolute path of the file to modify.")
    old_string: str = Field(
        description="The exact text to replace (empty to create a new file with new_string)."
    )
    new_string: str = Field(description="The text to put in its place (must differ).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)."
    )


@dataclass
class EditPlan:
    path: Path
    base: Document | None
    """What the write is versioned against; None when creating a missing file."""
    new_text: str
    count: int = 1
    first_line: int = 1
    last_line: int = 1
    notes: list[str] = field(default_factory=lambda: list[str]())


def _short(s: str, limit: int = 300) -> str:
    return s if len(s) <= limit else s[:limit] + "…"


def match(inp: EditInput, doc: Document, *, stale: bool) -> EditPlan:
    """Apply ``inp`` to ``doc``'s text; ``stale`` means the agent has not seen this text."""
    outcome = replace(doc.text, inp.old_string, inp.new_string, replace_all=inp.replace_all)
    if stale and isinstance(outcome, NotFound | Ambiguous):
        found = (
            "no longer occurs in it"
            if isinstance(outcome, NotFound)
            else f"now occurs {outcome.count} times"
        )
        raise ToolError(
            f"The file changed since you read it and old_string {found}. "
            "Read the file again and retry with its current text."
        )
    if isinstance(outcome, NotFound):
        raise ToolError(
            "old_string was not found in the file (whitespace and indentation must match "
            f"exactly).\nString: {_short(inp.old_string)}"
        )
    if isinstance(outcome, Ambiguous):
        raise ToolError(
            f"old_string occurs {outcome.count} times, but replace_all is false. Set "
            "replace_all to true to replace every occurrence, or add surrounding lines to "
            f"old_string so it matches only one.\nString: {_short(inp.old_string)}"
        )
    notes: list[str] = []
    if stale:
        notes.append(STALE_NOTE if outcome.count == 1 else STALE_NOTE_ALL.format(outcome.count))
    if outcome.quotes_normalized:
        notes.append("Note: old_string matched after treating curly and straight quotes alike.")
    return EditPlan(
        doc.path, doc, outcome.new_text, outcome.count, outcome.first_line, outcome.last_line, notes
    )


async def plan_edit(inp: EditInput, ctx: ToolContext) -> EditPlan:
    """Every check of an edit, ending in the exact text to write; raises ToolError."""
    if inp.old_string == inp.new_string:
        raise ToolError(NO_CHANGE)
    path = await ctx.threads.run(
        resolve_tool_path, inp.file_path, ctx.cwd, ctx.allowed_dirs, ctx.config.caller_env
    )
    if path.suffix.lower() == ".ipynb":
        raise ToolError("This is a Jupyter notebook; edit it with NotebookEdit, not Edit.")
    doc = await read_document(ctx, path)
    if doc is None:
        if inp.old_string == "":
            return EditPlan(path, None, inp.new_string, last_line=inp.new_string.count("\n") + 1)
        raise ToolError(await missing_file_message(path, ctx.cwd))
    if inp.old_string == "":
        if doc.text.strip():
            raise ToolError(
                "Cannot create the file: it already exists and is not empty. Give old_string "
                "to change part of it, or use Write to replace it whole."
            )
        return EditPlan(path, doc, inp.new_string, last_line=inp.new_string.count("\n") + 1)
    record = ctx.files.get(path)
    if record is None:
        raise ToolError(NOT_READ)
    refuse_unconfirmed(ctx, path)
    return match(inp, doc, stale=record.hash != text_hash(doc.text))


async def _write(
    inp: EditInput, ctx: ToolContext, plan: EditPlan
) -> tuple[EditPlan, Written | Unconfirmed]:
    for _attempt in range(MAX_CONFLICT_RETRIES + 1):
        outcome = await write_change(ctx, plan, "Edit")
        if not isinstance(outcome, Conflict):
            return plan, outcome
        plan = await _rematch(inp, ctx, plan, outcome)
    raise ToolError(
        f"The file kept changing while the edit was being applied ({MAX_CONFLICT_RETRIES + 1} "
        "attempts); nothing was overwritten. Wait for the user to finish, read the file again, "
        "then retry."
    )


async def _rematch(inp: EditInput, ctx: ToolContext, plan: EditPlan, c: Conflict) -> EditPlan:
    if plan.base is None or inp.old_string == "":
        raise ToolError(f"Nothing was written: {c.reason}. Read the file, then retry.")
    current = c.current or await read_document(ctx, plan.path)
    if current is None:
        raise ToolError("The file was deleted while the edit was being applied.")
    if current == plan.base:
        # Nothing moved: sending the same edit against the same version again would only be
        # refused again (or asked about again).
        raise ToolError(
            f"Nothing was written: {c.reason}. Read the file again, then retry if the change "
            "is still needed."
        )
    again = match(inp, current, stale=True)
    again.notes = [n for n in again.notes if not n.startswith("Note: the file had")]
    again.notes.append(RETRY_NOTE)
    return again


def _summary(inp: EditInput, plan: EditPlan, written: Document) -> str:
    if plan.base is None:
        head = f"File created successfully at: {plan.path}"
    elif inp.replace_all:
        head = f"The file {plan.path} has been updated: all {plan.count} occurrences replaced."
    else:
        head = f"The file {plan.path} has been updated."
    shown = snippet(written.text, plan.first_line, plan.last_line)
    parts = [f"{head} The edited region now reads:\n{shown}", *plan.notes]
    return "\n\n".join(parts)


async def _call(inp: EditInput, ctx: ToolContext) -> ToolResult:
    plan = await plan_edit(inp, ctx)
    plan, written = await _write(inp, ctx, plan)
    if isinstance(written, Unconfirmed):
        return unconfirmed_result(ctx, plan, written)
    previous = ctx.files.get(plan.path)
    ctx.files.record(written.document, partial=previous.partial if previous else False)
    old_text = plan.base.text if plan.base is not None else None
    diff = diff_content(plan.path, old_text, written.document.text)
    return ToolResult(content=_summary(inp, plan, written.document), display=[diff])


EDIT_TOOL: Tool[EditInput] = file_tool("Edit", EditInput, plan_edit, _call, lambda i: i.file_path)
