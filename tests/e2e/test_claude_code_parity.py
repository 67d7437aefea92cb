"""The same run through Claude Code's own CLI and through Tether: the same script on the same
fake Messages API, the same command line, the same sequence of message types and content
block types on stdout.

Claude Code's CLI is the one the ``claude-agent-sdk`` wheel bundles (a native binary); it
runs offline here with ``ANTHROPIC_BASE_URL`` pointing at the fake and a dummy key, in a
private ``HOME``. The test is skipped, saying why, where the wheel ships no binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURE = Path(__file__).parent.parent / "fixtures" / "workspaces" / "basic"
CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
TETHER = Path(sys.executable).with_name("tether")


def script_for(root: Path) -> list[Any]:
    app = str(root / "src" / "app.py")
    return [
        [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "name": "Read", "input": {"file_path": app}},
        ],
        [
            {
                "type": "tool_use",
                "name": "Edit",
                "input": {"file_path": app, "old_string": "Bye, ", "new_string": "Goodbye, "},
            }
        ],
        [{"type": "tool_use", "name": "Bash", "input": {"command": "echo all-done"}}],
        {"expect": {"contains": "all-done"}, "blocks": [{"type": "text", "text": "Finished."}]},
    ]


FLAGS = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
    "--allowedTools",
    "Bash(echo:*)",
]


def run(program: Path, tmp: Path, name: str, extra: list[str]) -> list[dict[str, Any]]:
    root = tmp / name / "ws"
    shutil.copytree(FIXTURE, root)
    env = {
        **os.environ,
        "HOME": str(tmp / name / "home"),
        "TETHER_DATA_DIR": str(tmp / name / "data"),
        "XDG_CONFIG_HOME": str(tmp / name / "config"),
        "ANTHROPIC_API_KEY": "dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    with FakeAnthropicServer(script_for(root)) as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        done = subprocess.run(
            [str(program), "-p", "Tidy up the farewell", *FLAGS, *extra],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
        api.assert_complete()
    assert "Goodbye," in (root / "src" / "app.py").read_text()
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def shape(lines: list[dict[str, Any]]) -> list[str]:
    """Each line as its message type (with subtype or event type) and its block types. How
    many deltas a block streams in is chunking, not format: a run of them counts once."""
    out: list[str] = []
    for line in lines:
        kind = line["type"]
        if kind == "system":
            out.append(f"system/{line['subtype']}")
        elif kind == "stream_event":
            event = f"stream_event/{line['event']['type']}"
            if event.endswith("_delta") and out and out[-1] == event:
                continue
            out.append(event)
        elif kind in ("assistant", "user"):
            content = line["message"]["content"]
            blocks = [b["type"] for b in content] if isinstance(content, list) else ["text"]
            out.append(f"{kind}{blocks}")
        elif kind == "result":
            out.append(f"result/{line['subtype']}")
        else:
            out.append(kind)
    return out


@pytest.fixture
def claude_code() -> Path:
    if not CLAUDE.is_file():
        pytest.skip(f"claude-agent-sdk ships no Claude Code binary for this platform ({CLAUDE})")
    return CLAUDE


@pytest.mark.parametrize("extra", [[], ["--include-partial-messages"]], ids=["messages", "partial"])
def test_same_messages_as_claude_code(claude_code: Path, tmp_path: Path, extra: list[str]) -> None:
    theirs = run(claude_code, tmp_path, "claude", extra)
    ours = run(TETHER, tmp_path, "tether", extra)
    assert shape(ours) == shape(theirs)
    # The fields the SDKs read are there on both sides.
    for line in (theirs[0], ours[0]):
        assert {"cwd", "tools", "model", "permissionMode", "session_id", "uuid"} <= set(line)
    for line in (theirs[-1], ours[-1]):
        assert line["result"] == "Finished." and line["num_turns"] == 4 and not line["is_error"]
        assert {"duration_ms", "duration_api_ms", "usage", "total_cost_usd"} <= set(line)
    assert all(line.get("session_id") == ours[0]["session_id"] for line in ours)
