"""docs/troubleshooting.md is built around ``tether doctor``'s output: every line it quotes
in its "doctor says" columns is one the doctor can print, and every area it prints has a
section of its own."""

from __future__ import annotations

import re
from pathlib import Path

import tether.cli.doctor as doctor_package
import tether.providers.registry as registry

REPO = Path(__file__).resolve().parents[3]
DOC = (REPO / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
SOURCES = [*Path(doctor_package.__file__).parent.glob("*.py"), Path(registry.__file__)]
"""The doctor, and the model resolution whose errors it shows as they are."""
SOURCE = "\n".join(p.read_text(encoding="utf-8") for p in SOURCES)
_ROW = re.compile(r"^\| ([^|]+) \|", re.M)


def quoted() -> list[str]:
    """The first cells of every table whose header is ``doctor says``."""
    cells: list[str] = []
    for table in re.findall(r"^\| doctor says \|.*?\n\|---.*?\n((?:\|.*\n)+)", DOC, re.M):
        cells += [c.strip() for c in _ROW.findall(table)]
    return cells


def test_every_quoted_line_is_one_the_doctor_prints() -> None:
    cells = quoted()
    assert len(cells) >= 20, cells
    for cell in cells:
        # "…", single capitals (M, URL) and status numbers stand for what varies; the rest
        # is literal.
        text = re.sub(r"HTTP \d+", "HTTP …", cell.replace("`", ""))
        pieces = [p.strip() for p in re.split(r"…|\bM\b|\bURL\b", text)]
        for piece in filter(None, pieces):
            assert piece in SOURCE, f"{cell!r}: {piece!r} is not in the doctor's wording"


def test_every_area_has_a_section() -> None:
    areas = set(re.findall(r'^AREA = "(\w+)"', SOURCE, re.M)) | {"install", "settings", "clients"}
    assert {"sandbox", "model", "daemon", "workspace"} <= areas
    for area in areas:
        assert re.search(rf"^## {area}\b", DOC, re.M), f"no section for {area}"
