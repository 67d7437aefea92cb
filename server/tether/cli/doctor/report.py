"""Findings and their one renderer: text for a person, JSON for a program."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from tether.cli.style import Style, colour_wanted

Status = Literal["ok", "info", "warn", "fail"]
"""``ok`` works; ``info`` worth knowing; ``warn`` works less well than it could; ``fail``
something a user needs is broken (the exit code is 1)."""


@dataclass(frozen=True)
class Finding:
    area: str
    """``install``, ``sandbox``, ``model``, ``daemon``, ``workspace``, ``clients``."""
    status: Status
    summary: str
    """One line: what is so, and why."""
    details: tuple[str, ...] = ()
    fix: str | None = None
    """What to do about it (None: nothing to do)."""


@dataclass(frozen=True)
class Header:
    version: str
    python: str
    package: str
    """Where the running Tether is installed."""


@dataclass(frozen=True)
class Report:
    header: Header
    findings: Sequence[Finding] = field(default_factory=lambda: list[Finding]())

    @property
    def exit_code(self) -> int:
        return 1 if any(f.status == "fail" for f in self.findings) else 0

    def counts(self) -> dict[Status, int]:
        out: dict[Status, int] = {"ok": 0, "info": 0, "warn": 0, "fail": 0}
        for finding in self.findings:
            out[finding.status] += 1
        return out


_MARKS: dict[Status, str] = {"ok": "✓", "info": "·", "warn": "!", "fail": "✗"}
_AREA_WIDTH = 10


def render_text(report: Report, out: TextIO | None = None) -> str:
    stream = out or sys.stdout
    s = Style(colour_wanted(stream))
    paint = {"ok": s.green, "info": s.dim, "warn": s.yellow, "fail": s.red}
    h = report.header
    lines = [s.bold(f"tether {h.version}") + s.dim(f" · Python {h.python} · {h.package}"), ""]
    indent = " " * (_AREA_WIDTH + 3)
    for f in report.findings:
        mark = paint[f.status](_MARKS[f.status])
        lines.append(f"{mark} {f.area.ljust(_AREA_WIDTH)} {f.summary}")
        lines += [f"{indent}{s.dim(d)}" for d in f.details]
        if f.fix:
            lines.append(f"{indent}{s.bold('fix:')} {f.fix}")
    n = report.counts()
    problems = f"{n['fail']} problem(s), {n['warn']} warning(s)"
    lines += ["", problems if n["fail"] or n["warn"] else "Everything Tether needs works here."]
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    body = {
        **asdict(report.header),
        "ok": report.exit_code == 0,
        "findings": [{**asdict(f), "details": list(f.details)} for f in report.findings],
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def package_dir() -> str:
    import tether

    return str(Path(tether.__file__).parent)
