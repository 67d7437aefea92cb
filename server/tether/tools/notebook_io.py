"""Jupyter notebooks as Read shows them and NotebookEdit changes them, through ``nbformat``.

Read renders each cell with its id, type and source, followed by its outputs: text as text
(tracebacks without terminal colours), PNG/JPEG/GIF outputs as images the model can look at.
Cells are addressed by their ``id`` (nbformat 4.5+); notebooks older than that have none, so
``cell-N`` (0-based position) works too, and that is what Read shows for them.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import nbformat
from nbformat import NotebookNode

from tether.core.messages import ImageBlock, ResultPart, TextBlock
from tether.errors import ToolError

MAX_OUTPUT_CHARS = 10_000
"""Text of one cell's outputs shown by Read; the rest is cut with a note."""
IMAGE_OUTPUTS = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_POSITION = re.compile(r"^cell-(\d+)$")
# nbformat has no type annotations: its entry points, typed as they behave.
_untyped: Any = nbformat
_reads = cast("Callable[..., NotebookNode]", _untyped.reads)
_writes = cast("Callable[[NotebookNode], str]", _untyped.writes)


def parse_notebook(text: str, where: str) -> NotebookNode:
    """The notebook in ``text`` (any nbformat 4.x), or a ToolError naming what is wrong."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # old minor versions warn about missing ids
            return _reads(text, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError) as e:
        raise ToolError(f"{where} is not valid notebook JSON: {e}")
    except Exception as e:  # nbformat raises a zoo of types for malformed notebooks
        raise ToolError(f"{where} is not a readable Jupyter notebook: {e}")


def dump_notebook(notebook: NotebookNode) -> str:
    """Serialized as Jupyter writes it (one-space indent, trailing newline)."""
    return _writes(notebook) + "\n"


def validation_problem(notebook: NotebookNode) -> str | None:
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as e:
        return str(e.message)
    return None


def cell_label(notebook: NotebookNode, index: int) -> str:
    cell_id = notebook.cells[index].get("id")
    return str(cell_id) if cell_id else f"cell-{index}"


def find_cell(notebook: NotebookNode, cell_id: str) -> int:
    """Position of the cell with ``cell_id`` (or ``cell-N``); ToolError when absent."""
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == cell_id:
            return index
    match = _POSITION.match(cell_id)
    if match is not None and int(match.group(1)) < len(notebook.cells):
        return int(match.group(1))
    known = ", ".join(cell_label(notebook, i) for i in range(min(len(notebook.cells), 20)))
    raise ToolError(f'No cell with id "{cell_id}" in the notebook. Cells: {known or "none"}.')


def source_text(cell: NotebookNode) -> str:
    source: Any = cell.get("source", "")
    if isinstance(source, list):
        return "".join(str(s) for s in cast(list[Any], source))
    return str(source)


def render_notebook(notebook: NotebookNode) -> list[ResultPart]:
    """Cells with their outputs, text and images interleaved in notebook order."""
    parts: list[ResultPart] = []
    text: list[str] = []
    language = str(notebook.metadata.get("language_info", {}).get("name", "") or "")
    for index, cell in enumerate(notebook.cells):
        attrs = f'id="{cell_label(notebook, index)}" type="{cell.cell_type}"'
        count = cell.get("execution_count")
        if count is not None:
            attrs += f' execution_count="{count}"'
        if cell.cell_type == "code" and language:
            attrs += f' language="{language}"'
        text.append(f"<cell {attrs}>\n{source_text(cell)}\n</cell>")
        outputs: Sequence[NotebookNode] = cell.get("outputs", [])
        if not outputs:
            continue
        rendered, images = _outputs(outputs)
        if rendered:
            text.append(f"<outputs>\n{rendered}\n</outputs>")
        if images:
            parts.append(TextBlock(text="\n".join(text)))
            parts.extend(images)
            text = []
    if text:
        parts.append(TextBlock(text="\n".join(text)))
    if not parts:
        parts.append(
            TextBlock(text="<system-reminder>The notebook has no cells.</system-reminder>")
        )
    return parts


def _outputs(outputs: Sequence[NotebookNode]) -> tuple[str, list[ImageBlock]]:
    chunks: list[str] = []
    images: list[ImageBlock] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            chunks.append(_joined(output.get("text", "")))
        elif kind == "error":
            trace = output.get("traceback") or [f"{output.get('ename')}: {output.get('evalue')}"]
            chunks.append(_ANSI.sub("", "\n".join(str(t) for t in trace)))
        elif kind in ("execute_result", "display_data"):
            data: dict[str, Any] = dict(output.get("data", {}))
            image = next((m for m in IMAGE_OUTPUTS if m in data), None)
            if image is not None:
                images.append(ImageBlock(media_type=image, data=_joined(data[image]).strip()))
            elif "text/plain" in data:
                chunks.append(_joined(data["text/plain"]))
            elif data:
                chunks.append(f"[output of type {', '.join(sorted(data))}]")
    text = "\n".join(c.rstrip("\n") for c in chunks if c)
    if len(text) > MAX_OUTPUT_CHARS:
        cut = len(text) - MAX_OUTPUT_CHARS
        text = text[:MAX_OUTPUT_CHARS] + f"\n[... {cut} more characters of output cut]"
    return text, images


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in cast(list[Any], value))
    return str(value)
