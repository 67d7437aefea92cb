"""Prompts are data: package files rendered strictly (a missing variable is an error)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template


@cache
def load(name: str) -> str:
    """Text of ``prompts/<name>`` (e.g. ``tools/Read.md``), cached for the process."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def render(name: str, **values: object) -> str:
    """Render ``prompts/<name>`` with ``$var`` substitution; raises KeyError on a missing one."""
    return Template(load(name)).substitute({k: str(v) for k, v in values.items()})
