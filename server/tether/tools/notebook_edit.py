"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook.

The notebook is parsed and written by ``nbformat`` and must pass its validator before
anything is written. As with Write, it must have been read first and still be what was
read; the write goes through the editor, versioned against that text. A replaced code cell
loses its outputs and execution count: they belonged to the old source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from tether.editor.port import Conflict, Document, Unconfirmed
from tether.errors import ToolError
from tether.tools.base import Tool, ToolResult
from tether.tools.context import ToolContext, text_hash
from tether.tools.file_write import (
    diff_of,
    file_tool,
    unconfirmed_result,
    write_change,
)
from tether.tools.paths import PathText, resolve_tool_path
from tether.tools.read import missing_file_message, read_document
from tether.tools.write import CHANGED, conflict_message

if TYPE_CHECKING:
    from nbformat import NotebookNode

NOT_READ = "The notebook has not been read yet. Read it first, then edit it."


class NotebookEditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notebook_path: PathText = Field(description="Absolute path of the .ipynb file to change.")
    cell_id: str | None = Field(
        default=None,
        description="Id of the cell to change or delete. With insert, the new cell goes after "
        "this cell, or first when cell_id is left out.",
    )
    new_source: str = Field(description="The new source of the cell (ignored for delete).")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None,
        description="The type of the cell. Required for insert; for replace, the cell keeps "
        "its type unless this is given.",
    )
    edit_mode: Literal["replace", "insert", "delete"] = Field(
        default="replace", description="replace (default), insert or delete."
    )


@dataclass(frozen=True)
class NotebookPlan:
    path: Path
    base: Document
    new_text: str
    summary: str


def _new_cell(notebook: NotebookNode, kind: str, source: str) -> NotebookNode:
    from nbformat import v4

    untyped: Any = v4  # nbformat has no type annotations
    make = cast(
        "Callable[[str], NotebookNode]",
        untyped.new_code_cell if kind == "code" else untyped.new_markdown_cell,
    )
    cell = make(source)
    if (notebook.nbformat, notebook.nbformat_minor) < (4, 5):
        del cell["id"]  # cell ids exist from nbformat 4.5 on; older notebooks refuse them
    return cell


def _apply(inp: NotebookEditInput, notebook: NotebookNode) -> str:
    """Change ``notebook`` in place; returns what was done, for the model."""
    from tether.tools.notebook_io import cell_label, find_cell

    cells: list[NotebookNode] = notebook.cells
    if inp.edit_mode == "insert":
        if inp.cell_type is None:
            raise ToolError("cell_type (code or markdown) is required to insert a cell.")
        at = 0 if inp.cell_id is None else find_cell(notebook, inp.cell_id) + 1
        cells.insert(at, _new_cell(notebook, inp.cell_type, inp.new_source))
        return f"Inserted a {inp.cell_type} cell {cell_label(notebook, at)} at position {at}."
    if inp.cell_id is None:
        raise ToolError(f"cell_id is required to {inp.edit_mode} a cell.")
    index = find_cell(notebook, inp.cell_id)
    label = cell_label(notebook, index)
    if inp.edit_mode == "delete":
        del cells[index]
        return f"Deleted cell {label}."
    old = cells[index]
    kind = inp.cell_type or str(old.cell_type)
    if kind != old.cell_type:
        cell = _new_cell(notebook, kind, inp.new_source)
        if "id" in old:
            cell["id"] = old["id"]
        cell["metadata"] = old.get("metadata", {})
        cells[index] = cell
    else:
        old["source"] = inp.new_source
        if kind == "code":
            old["outputs"] = []
            old["execution_count"] = None
    return f"Updated cell {label} ({kind})."


async def plan_notebook_edit(inp: NotebookEditInput, ctx: ToolContext) -> NotebookPlan:
    """Every check, ending in the exact text to write; raises ToolError."""
    # nbformat loads on first use: it would slow every daemon start.
    from tether.tools.notebook_io import dump_notebook, parse_notebook, validation_problem

    path = await ctx.threads.run(
        resolve_tool_path, inp.notebook_path, ctx.cwd, ctx.allowed_dirs, ctx.config.caller_env
    )
    if path.suffix.lower() != ".ipynb":
        raise ToolError(f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files.")
    doc = await read_document(ctx, path)
    if doc is None:
        raise ToolError(await missing_file_message(path, ctx.cwd))
    record = ctx.files.get(path)
    if record is None:
        raise ToolError(NOT_READ)
    if record.hash != text_hash(doc.text):
        raise ToolError(CHANGED)
    notebook = parse_notebook(doc.text, str(path))
    summary = _apply(inp, notebook)
    problem = validation_problem(notebook)
    if problem is not None:
        raise ToolError(
            f"The edit would make the notebook invalid, so nothing was written: {problem}"
        )
    return NotebookPlan(path, doc, dump_notebook(notebook), summary)


async def _call(inp: NotebookEditInput, ctx: ToolContext) -> ToolResult:
    plan = await plan_notebook_edit(inp, ctx)
    outcome = await write_change(ctx, plan, "NotebookEdit")
    if isinstance(outcome, Unconfirmed):
        return unconfirmed_result(ctx, plan, outcome)
    if isinstance(outcome, Conflict):
        raise ToolError(conflict_message(outcome))
    ctx.files.record(outcome.document)
    return ToolResult(content=plan.summary, display=[diff_of(plan)])


NOTEBOOK_EDIT_TOOL: Tool[NotebookEditInput] = file_tool(
    "NotebookEdit",
    NotebookEditInput,
    plan_notebook_edit,
    _call,
    lambda i: i.notebook_path,
    title=lambda i: f"NotebookEdit {i.notebook_path} ({i.edit_mode})",
)
