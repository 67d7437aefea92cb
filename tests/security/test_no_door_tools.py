"""What version managers' shell hooks act on when a shell enters the folder: mise's
configuration (``[env]`` ``_.source``, ``exec()`` templates, ``[hooks]``, ``path:`` tools)
and asdf's ``.tool-versions`` (``path:`` versions). None of them is installed here, so the
judge is the file: a sandboxed command leaves it as it was (it plants it unsandboxed), and
the file tools ask before writing it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import MakeHarness, needs_bwrap, text_of

pytestmark = needs_bwrap

SOURCE = "printf '[env]\\n_.source = \"./scripts/env.sh\"\\n'"
VERSION_ATTACKS = [
    pytest.param(f"{SOURCE} > mise.toml", "mise.toml", id="mise-toml-source"),
    pytest.param(
        "printf '[hooks]\\nenter = \"sh ./x.sh\"\\n' > t && mkdir -p api && mv t api/.mise.toml",
        "api/.mise.toml",
        id="mise-hooks-nested-renamed-in",
    ),
    pytest.param(
        "mkdir -p .config/mise && printf '[env]\\nX = \"%s\"\\n'"
        " \"{{{{ exec(command='sh x.sh') }}}}\" > .config/mise/config.toml",
        ".config/mise/config.toml",
        id="mise-config-folder-exec-template",
    ),
    pytest.param(
        "mkdir -p .mise && printf '[tools]\\nnode = \"path:./evil\"\\n' > .mise/config.toml",
        ".mise/config.toml",
        id="mise-dot-folder-path-tool",
    ),
    pytest.param(f"{SOURCE} > mise.local.toml", "mise.local.toml", id="mise-local"),
    pytest.param(
        "echo 'nodejs path:./evil' > .tool-versions", ".tool-versions", id="asdf-path-version"
    ),
    pytest.param(
        "mkdir -p web && echo 'ruby path:/tmp/r' > x && ln -s ../x web/.tool-versions",
        "web/.tool-versions",
        id="asdf-symlink-nested",
    ),
    pytest.param(f"{SOURCE} > mise.production.toml", "mise.production.toml", id="mise-env-file"),
]


@pytest.mark.parametrize(("command", "door"), VERSION_ATTACKS)
async def test_version_manager_configuration_is_a_door(
    make_harness: MakeHarness,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    door: str,
) -> None:
    monkeypatch.setenv("MISE_ENV", "production")
    line = command.format()
    control = tmp_path / "control"
    shutil.copytree(workspace, control, symlinks=True)
    subprocess.run(["bash", "-c", line], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
    assert (control / door).exists(), f"{door} is not planted even unsandboxed"

    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=line))
    assert not (workspace / door).exists(), out
    assert "refused" in out or "Read-only" in out, out

    edits = make_harness(mode="acceptEdits", allow=("Write",))
    decision = await edits.decide("Write", file_path=door, content="[env]\n")
    assert decision.behavior == "ask" and decision.forced, (door, decision)


@pytest.mark.parametrize("name", [".nvmrc", ".node-version", ".python-version"])
async def test_a_version_file_naming_a_version_is_the_projects(
    make_harness: MakeHarness, workspace: Path, name: str
) -> None:
    """``.nvmrc`` and its kind name a version that nvm, direnv's ``use node`` or pyenv
    pick among the installed ones (or download from the official mirror): no code, so
    the agent may pin one."""
    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=f"echo 20 > {name} && cat {name}"))
    assert out.strip() == "20", out
