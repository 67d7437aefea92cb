"""NotebookEdit on a fixture notebook: every edit mode, the result checked by nbformat's own
validator; the read-before-write rules; edits that would break the notebook refused."""

from __future__ import annotations

import json
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.notebook_edit import NOTEBOOK_EDIT_TOOL
from tether.tools.read import READ_TOOL

Run = Callable[..., Awaitable[ToolResult]]
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "notebooks" / "analysis.ipynb"


@pytest.fixture
def notebook(workspace: Path) -> Path:
    path = workspace / "analysis.ipynb"
    shutil.copy(FIXTURE, path)
    return path


def load(path: Path) -> Any:
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)  # the library's own validator: raises on an invalid notebook
    return nb


async def edit(run: Run, **fields: Any) -> ToolResult:
    return await run(NOTEBOOK_EDIT_TOOL, {"notebook_path": "analysis.ipynb", **fields})


async def test_replace_keeps_type_and_clears_outputs(run: Run, notebook: Path) -> None:
    await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    result = await edit(run, cell_id="double", new_source="total * 3")
    assert not result.is_error, result.content
    assert result.content == "Updated cell double (code)."
    nb = load(notebook)
    cell = nb.cells[2]
    assert (cell.id, cell.cell_type, cell.source) == ("double", "code", "total * 3")
    assert cell.outputs == [] and cell.execution_count is None
    assert nb.cells[1].outputs[0].text == "6\n"  # other cells untouched


async def test_replace_can_change_the_cell_type(run: Run, notebook: Path) -> None:
    await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    result = await edit(run, cell_id="chart", new_source="A chart was here.", cell_type="markdown")
    assert not result.is_error, result.content
    cell = load(notebook).cells[3]
    assert (cell.id, cell.cell_type, cell.source) == ("chart", "markdown", "A chart was here.")
    assert "outputs" not in cell


async def test_insert_after_a_cell_and_at_the_top(run: Run, notebook: Path) -> None:
    await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    after = await edit(
        run, cell_id="load", new_source="print(total)", cell_type="code", edit_mode="insert"
    )
    assert not after.is_error, after.content
    top = await edit(run, new_source="# Title", cell_type="markdown", edit_mode="insert")
    assert not top.is_error, top.content
    nb = load(notebook)
    assert [c.source for c in nb.cells[:4]] == [
        "# Title",
        "# Sales analysis\nQuarterly numbers.",
        "import math\n\ntotal = sum([1, 2, 3])\nprint(total)",
        "print(total)",
    ]
    assert nb.cells[3].id and nb.cells[3].id not in {"intro", "load", "double", "chart"}
    missing_type = await edit(run, cell_id="load", new_source="x", edit_mode="insert")
    assert missing_type.is_error and "cell_type" in str(missing_type.content)


async def test_delete(run: Run, notebook: Path) -> None:
    await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    result = await edit(run, cell_id="broken", new_source="", edit_mode="delete")
    assert not result.is_error and result.content == "Deleted cell broken."
    assert [c.id for c in load(notebook).cells] == ["intro", "load", "double", "chart"]
    gone = await edit(run, cell_id="broken", new_source="", edit_mode="delete")
    assert gone.is_error and 'No cell with id "broken"' in str(gone.content)


async def test_must_be_read_first_and_unchanged(run: Run, notebook: Path) -> None:
    unread = await edit(run, cell_id="load", new_source="x")
    assert unread.is_error and "not been read" in str(unread.content)
    await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    data = json.loads(notebook.read_text())
    data["cells"][0]["source"] = ["changed by the user"]
    notebook.write_text(json.dumps(data, indent=1))
    stale = await edit(run, cell_id="load", new_source="x")
    assert stale.is_error and "changed since you last read it" in str(stale.content)
    assert json.loads(notebook.read_text())["cells"][1]["source"][0].startswith("import math")


async def test_old_notebook_cells_by_position(run: Run, workspace: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = 4
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("notes")]
    for cell in nb.cells:
        del cell["id"]
    (workspace / "old.ipynb").write_text(nbformat.writes(nb, version=4))
    shown = await run(READ_TOOL, {"file_path": "old.ipynb"})
    assert '<cell id="cell-1" type="markdown">' in str(shown.content)
    result = await run(
        NOTEBOOK_EDIT_TOOL,
        {
            "notebook_path": "old.ipynb",
            "cell_id": "cell-0",
            "new_source": "b",
            "edit_mode": "insert",
            "cell_type": "code",
        },
    )
    assert not result.is_error, result.content
    after = load(workspace / "old.ipynb")
    assert [c.source for c in after.cells] == ["a = 1", "b", "notes"]
    assert all("id" not in c for c in after.cells)  # 4.4 has no cell ids


async def test_not_a_notebook_or_broken_json(run: Run, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    wrong = await run(
        NOTEBOOK_EDIT_TOOL, {"notebook_path": "a.py", "new_source": "y", "cell_id": "x"}
    )
    assert wrong.is_error and "not a Jupyter notebook" in str(wrong.content)
    (workspace / "bad.ipynb").write_text("{not json")
    bad = await run(READ_TOOL, {"file_path": "bad.ipynb"})
    assert bad.is_error and "not valid notebook JSON" in str(bad.content)


async def test_metadata_and_permission_preview(ctx: ToolContext, run: Run, notebook: Path) -> None:
    await run(READ_TOOL, {"file_path": "analysis.ipynb"})
    inp = NOTEBOOK_EDIT_TOOL.input_model(
        notebook_path=str(notebook), cell_id="double", new_source="total * 4"
    )
    assert NOTEBOOK_EDIT_TOOL.kind == "edit" and not NOTEBOOK_EDIT_TOOL.is_read_only(inp)
    assert NOTEBOOK_EDIT_TOOL.rule_content(inp) == str(notebook)
    check = await NOTEBOOK_EDIT_TOOL.check_permissions(inp, ctx)
    (diff,) = check.content
    assert diff.type == "diff" and '"total * 4"' in diff.new_text
