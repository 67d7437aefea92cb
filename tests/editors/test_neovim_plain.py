"""Headless Neovim 0.11 with no Tether plugin — only the configuration docs/editors.md gives
for Neovim — against the real daemon (``tether serve`` from the virtualenv) and the fake
Messages API: a code action fixes a diagnostic through Neovim's own permission dialog,
an instruction comment is carried out and removed, ``$/progress`` reports the steps and
``tether.cancel`` stops a long turn (``nvim/plain_flow.lua``); a turn's changes are undone
and kept hunk by hunk with code actions, and ``u`` takes an undo back
(``nvim/review_flow.lua``).

CI installs Neovim (``clients/neovim/ci-install.sh``); a missing one fails, not skips.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "editors.md"
FLOW = Path(__file__).parent / "nvim" / "plain_flow.lua"
REVIEW_FLOW = Path(__file__).parent / "nvim" / "review_flow.lua"
FIXTURE = REPO / "tests" / "fixtures" / "workspaces" / "basic"
BIN = Path(sys.executable).parent
MIN_VERSION = (0, 11)
TIMEOUT_S = 180


def tool(name: str, **input: object) -> dict[str, object]:
    return {"type": "tool_use", "name": name, "input": input}


def told(text: str, *blocks: dict[str, object]) -> dict[str, object]:
    return {"expect": {"contains": text}, "blocks": list(blocks)}


def say(text: str) -> dict[str, object]:
    return {"type": "text", "text": text}


SCRIPT = [
    # "Tether: fix this" on the linter's diagnostic
    told("undefined name", tool("Read", file_path="src/app.py")),
    [
        tool(
            "Edit",
            file_path="src/app.py",
            old_string='return "Hello, " + name',
            new_string='return "Hi, " + name',
        )
    ],
    told("has been updated", say("Fixed greet() in app.py.")),
    # "Tether: do this" on the instruction comment; the comment goes with the edit
    told(
        "remove that instruction comment",
        tool(
            "Edit",
            file_path="src/app.py",
            old_string="# tether: say Ciao in farewell\ndef farewell(name: str) -> str:\n"
            '    return "Bye, " + name',
            new_string='def farewell(name: str) -> str:\n    return "Ciao, " + name',
        ),
    ),
    told("has been updated", say("Farewell says Ciao now.")),
    # a long answer, stopped with :TetherStop
    {"chunk_delay_ms": 300, "blocks": [say("Once upon a time " * 80)]},
]


def neovim_config() -> str:
    """The Lua block of the Neovim section of docs/editors.md."""
    text = DOCS.read_text(encoding="utf-8")
    section = re.search(r"^## Neovim\b.*?(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert section is not None, "docs/editors.md has no '## Neovim' section"
    block = re.search(r"```lua\n(.*?)```", section.group(0), re.DOTALL)
    assert block is not None, "the Neovim section has no lua block"
    return block.group(1)


@pytest.fixture(scope="module")
def nvim() -> str:
    path = shutil.which("nvim", path=str(BIN)) or shutil.which("nvim")
    if path is None:
        pytest.fail("nvim is not installed; run clients/neovim/ci-install.sh")
    first = subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.splitlines()[0]
    found = re.match(r"NVIM v(\d+)\.(\d+)", first)
    if found is None or (int(found[1]), int(found[2])) < MIN_VERSION:
        pytest.fail(f"{path} is {first!r}; these tests need Neovim >= 0.11")
    return path


REVIEW_SCRIPT = [
    [tool("Read", file_path="src/app.py")],
    [
        tool(
            "Edit",
            file_path="src/app.py",
            old_string='return "Hello, " + name\n\n\ndef farewell(name: str) -> str:\n'
            '    return "Bye, " + name',
            new_string='return "Hi, " + name\n\n\ndef farewell(name: str) -> str:\n'
            '    return "Ciao, " + name',
        )
    ],
    told("has been updated", say("Shorter greetings now.")),
]


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(SCRIPT) as server:
        yield server


def test_neovim_without_the_plugin(nvim: str, tmp_path: Path, api: FakeAnthropicServer) -> None:
    output = run_flow(nvim, tmp_path, api, FLOW)
    steps = re.findall(r"^ok - (.*)$", output, re.MULTILINE)
    assert len(steps) == 6, output
    # The flow stops the long turn as soon as it begins: its request may be cut off before
    # it reaches the API (then its scripted turn is never asked for). Every other turn was.
    assert api.remaining <= 1 and not api.errors and not api.rejected, api.problems()
    assert api.remaining == 0 or len(api.requests) == len(SCRIPT) - 1


def test_neovim_reviews_a_turn_with_code_actions(nvim: str, tmp_path: Path) -> None:
    with FakeAnthropicServer(REVIEW_SCRIPT) as api:
        output = run_flow(nvim, tmp_path, api, REVIEW_FLOW)
        steps = re.findall(r"^ok - (.*)$", output, re.MULTILINE)
        assert len(steps) == 5, output
        api.assert_complete()


def run_flow(nvim: str, tmp_path: Path, api: FakeAnthropicServer, flow: Path) -> str:
    """Run a Lua flow in headless Neovim with the documented configuration; its output."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    (root / ".git").mkdir()  # the root marker of the documented configuration
    init = tmp_path / "init.lua"
    init.write_text(neovim_config(), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "XDG_", "NVIM", "VIM", "TETHER_"))
    }
    for name in ("config", "data", "state", "cache"):
        (tmp_path / name).mkdir()
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        TETHER_DATA_DIR=str(tmp_path / "tether"),
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=api.base_url,
        PYTHONUNBUFFERED="1",
    )
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(flow), str(init), str(root.resolve())],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"nvim exited {proc.returncode}:\n{output}"
    return output


def test_the_documented_config_is_what_runs() -> None:
    config = neovim_config()
    assert "vim.lsp.config('tether'" in config and "'tether', 'serve'" in config
    assert "clients/neovim" not in config
