"""A malformed ``tether/diagnostics`` entry is refused by name when it arrives; it never
reaches the store, where it would break every later turn that edits the file."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tether.lsp.diagnostics import DiagnosticsStore, diagnostics_source
from tether.lsp.params import DiagnosticsParams, InvalidParamsError, parse_params

RANGE = {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 4}}


def entry(**fields: Any) -> dict[str, Any]:
    return {"range": RANGE, "severity": 1, "message": "boom", **fields}


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (entry(range={"start": {"line": "x", "character": 0}, "end": RANGE["end"]}), "line"),
        (entry(range=[1, 2]), "range"),
        (entry(range={"start": {"line": math.inf, "character": 0}, "end": RANGE["end"]}), "line"),
        (entry(range={"start": {"line": -1, "character": 0}, "end": RANGE["end"]}), "line"),
        (entry(message=["not", "text"]), "message"),
        (entry(severity=9), "severity"),
        ({"message": "no range"}, "range"),
        ("just a string", "diagnostics.1"),
    ],
)
def test_a_malformed_entry_is_refused_naming_it(bad: object, where: str) -> None:
    with pytest.raises(InvalidParamsError) as e:
        parse_params(DiagnosticsParams, {"uri": "file:///a.py", "diagnostics": [entry(), bad]})
    assert "diagnostics.1" in str(e.value) and where in str(e.value)
    assert "diagnostics.0" not in str(e.value)


async def test_accepted_diagnostics_reach_the_next_turn(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    store = DiagnosticsStore()
    store.publish(path.as_uri(), [])
    params = parse_params(
        DiagnosticsParams,
        {"uri": path.as_uri(), "diagnostics": [entry(source="pyright", extra="ignored")]},
    )
    store.publish(params.uri, params.diagnostics)
    source = diagnostics_source(store, {path: 0.0}, lambda: True)
    (message,) = await source()
    assert f"{path}:3: boom [pyright]" in str(message.content[0])
