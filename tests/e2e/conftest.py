"""End-to-end fixtures: the real daemon over stdio, a fake Messages API, a scripted editor."""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp

from tether.lsp.protocol import tether_converter
from tether.lsp.testing.editor_client import EditorOptions, FakeEditor
from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURES = Path(__file__).parent.parent / "fixtures" / "workspaces"
MODEL = "anthropic:claude-sonnet-4-6"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "basic", root)
    return root


@pytest.fixture
def daemon_env(tmp_path: Path) -> dict[str, str]:
    return {
        "TETHER_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "ANTHROPIC_API_KEY": "test-key",
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture
def fake_api() -> Iterator[Callable[[list[Any]], FakeAnthropicServer]]:
    servers: list[FakeAnthropicServer] = []

    def start(script: list[Any]) -> FakeAnthropicServer:
        server = FakeAnthropicServer(script)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def make_editor(options: EditorOptions) -> FakeEditor:
    """A FakeEditor speaking through pytest-lsp's client (which checks the server's messages
    against the capabilities the client declared)."""
    client = pytest_lsp.LanguageClient(converter_factory=tether_converter)
    return FakeEditor(options, client=client)


@asynccontextmanager
async def running_daemon(
    folders: list[Path],
    env: dict[str, str],
    api: FakeAnthropicServer | None = None,
    **option_values: Any,
) -> AsyncIterator[FakeEditor]:
    init = option_values.pop("init_options", {"model": MODEL})
    options = EditorOptions(init_options=init, **option_values)
    editor = make_editor(options)
    full_env = dict(env)
    if api is not None:
        full_env["ANTHROPIC_BASE_URL"] = api.base_url
    await editor.start([sys.executable, "-m", "tether", "serve"], folders, env=full_env)
    try:
        yield editor
    finally:
        await editor.stop()


@pytest.fixture
def print_mode(
    workspace: Path,
    daemon_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[..., tuple[int, str, str]]]:
    """``tether`` print mode run in-process in ``workspace``: ``run(api, *argv, stdin="")``
    returns the exit code, stdout and stderr (``api``: the fake API the run talks to)."""
    from tether.cli.main import main

    for key, value in daemon_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.chdir(workspace)

    def run(api: FakeAnthropicServer | None, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        if api is not None:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    yield run


@pytest.fixture(params=["in-process", "daemon"])
def print_path(
    request: pytest.FixtureRequest, daemon_env: dict[str, str], tmp_path: Path
) -> Iterator[dict[str, str]]:
    """The variables that run ``tether -p`` in-process, or through a warm daemon (started
    here, stopped after the test): a test that takes this runs both ways."""
    if request.param == "in-process":
        yield {"TETHER_NO_DAEMON": "1"}
        return
    import os
    import subprocess

    values = {"TETHER_NO_DAEMON": "0", "TETHER_RUNTIME_DIR": str(tmp_path / "run")}
    full = {**os.environ, **daemon_env, **values}
    tether = [sys.executable, "-m", "tether", "daemon"]
    started = subprocess.run([*tether, "start"], env=full, capture_output=True, timeout=60)
    assert started.returncode == 0, started.stderr
    yield values
    subprocess.run([*tether, "stop"], env=full, capture_output=True, timeout=60)
