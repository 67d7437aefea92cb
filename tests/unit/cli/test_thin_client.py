"""The terminal's side of print mode through the warm daemon stays thin: which command
lines go to the daemon, and that the client path imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tether.cli.main import uses_daemon


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["-p", "hi"], {}, True),
        (["--print", "hi", "--output-format", "json"], {}, True),
        (["--input-format", "stream-json", "--output-format", "stream-json"], {}, True),
        (["run", "hi"], {}, True),
        (["--log-level", "DEBUG", "run", "hi"], {}, True),
        (["-p", "hi", "--no-daemon"], {}, False),
        (["-p", "hi"], {"TETHER_NO_DAEMON": "1"}, False),
        (["-p", "hi"], {"TETHER_NO_DAEMON": "0"}, True),
        (["-p", "--help"], {}, False),
        (["run", "--help"], {}, False),
        (["--version"], {}, False),
        (["hi"], {}, False),  # not print mode: the usage error is shown in-process
        (["serve", "--connect"], {}, False),
        (["sessions"], {}, False),
        (["daemon", "status"], {}, False),
        (["attach", "4f6c2a1e-8b7d-4c3a-9e21-5d0f7b6a9c13"], {}, False),
    ],
)
def test_which_command_lines_go_to_the_daemon(
    argv: list[str], env: dict[str, str], expected: bool
) -> None:
    assert uses_daemon(argv, env) is expected


def test_the_client_path_imports_only_the_standard_library() -> None:
    probe = (
        "import json, sys\n"
        "import tether.cli.main, tether.cli.remote\n"
        "heavy = ('pydantic', 'anthropic', 'openai', 'pygls', 'lsprotocol', 'tether.protocol',"
        " 'tether.engine', 'tether.workspace', 'asyncio')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy"
        " or m.startswith(heavy))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_a_session_with_a_running_task_keeps_a_daemon_of_another_build() -> None:
    """``in_use``: what stops a daemon of another build from being replaced under its
    callers: other clients, a running turn, and a background task still at work."""
    from tether.daemon.client import in_use

    idle = {"sessionId": "a", "workspace": "/w", "busy": False, "tasks": False}
    assert in_use({"clients": 1, "sessions": [idle]}) == 0
    assert in_use({"clients": 1, "sessions": [{**idle, "tasks": True}]}) == 1
    assert in_use({"clients": 1, "sessions": [{**idle, "busy": True}]}) == 1
    assert in_use({"clients": 3, "sessions": [idle]}) == 2
    assert in_use({"clients": 1, "sessions": [{"sessionId": "b", "busy": False}]}) == 0  # older
