"""The runtime dependencies declared in pyproject.toml are what server/tether imports.

Every third-party module imported anywhere in the package (at any depth, also inside
functions and ``TYPE_CHECKING`` blocks) must come from a declared distribution, so that a
fresh ``pip install`` gives a working daemon and not one that works only because something
else pulled the module in. Every declared distribution must be imported somewhere, or be
listed in ``NEEDED_AT_RUN_TIME`` with the reason. The installed versions must satisfy the
declared ranges.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import packages_distributions, version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "server" / "tether"
PACKAGE_DATA = {PACKAGE / "examples"}
"""Not the daemon's code: the demo workspace shipped as data (its own ``calc`` package)."""
NEEDED_AT_RUN_TIME: dict[str, str] = {}
"""Declared distributions that no module of the package imports by name, each with the
reason it is needed (e.g. a plugin loaded by entry point). None today."""


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(line) for line in project["dependencies"]]
    return {normalized(r.name): r for r in requirements}


def sources() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if not any(path.is_relative_to(data) for data in PACKAGE_DATA):
            yield path


def imported_modules() -> dict[str, set[str]]:
    """Top-level modules imported absolutely by the package, with the files that do."""
    found: dict[str, set[str]] = {}
    for path in sources():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def third_party() -> dict[str, set[str]]:
    return {
        module: files
        for module, files in imported_modules().items()
        if module not in sys.stdlib_module_names and module not in ("tether", "__future__")
    }


def distributions_of(module: str) -> set[str]:
    return {normalized(d) for d in packages_distributions().get(module, [])}


def test_the_walk_sees_the_package() -> None:
    modules = third_party()
    # Imports at the top, inside functions and under TYPE_CHECKING are all seen.
    assert {"pygls", "lsprotocol", "pydantic", "anthropic", "openai", "mcp"} <= set(modules)
    assert "calc" not in modules  # the demo workspace is data, not the daemon


def test_every_imported_module_is_declared() -> None:
    wanted = declared()
    problems: list[str] = []
    for module, files in sorted(third_party().items()):
        dists = distributions_of(module)
        where = ", ".join(sorted(files)[:3])
        if not dists:
            problems.append(f"{module} (imported in {where}) is not installed at all")
        elif not dists & set(wanted):
            problems.append(
                f"{module} (imported in {where}) comes from {', '.join(sorted(dists))}, "
                "which pyproject.toml does not declare: add it to [project] dependencies"
            )
    assert not problems, "\n".join(problems)


def test_every_declared_dependency_is_used() -> None:
    provided = {d for module in third_party() for d in distributions_of(module)}
    unused = set(declared()) - provided - {normalized(n) for n in NEEDED_AT_RUN_TIME}
    assert not unused, (
        f"declared in pyproject.toml but never imported by server/tether: {sorted(unused)}; "
        "remove them, or list them in NEEDED_AT_RUN_TIME with the reason"
    )


def test_installed_versions_satisfy_the_declared_ranges() -> None:
    for name, requirement in declared().items():
        installed = version(name)
        assert requirement.specifier.contains(installed, prereleases=True), (
            f"{name} {installed} is installed but pyproject.toml asks for {requirement}"
        )
