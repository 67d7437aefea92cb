"""kill -9 at random points of a scripted multi-turn session; every time, resume works:
no acknowledged user message is lost, the conversation sent to the model is well-formed
(every tool_use answered), and a continued turn completes."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer

from .conftest import FIXTURES

KILLS = 24
PROMPT = "Do the work: plan, read, run the step, edit"


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def session_script() -> list[Any]:
    todo = {"todos": [{"content": "work", "status": "in_progress", "activeForm": "Working"}]}
    return [
        {
            "chunk_delay_ms": 15,
            "blocks": [
                {"type": "text", "text": "Planning the work. " * 6},
                tool("TodoWrite", **todo),
                tool("Read", file_path="src/app.py"),
                tool("Read", file_path="README.md"),
            ],
        },
        {
            "chunk_delay_ms": 10,
            "blocks": [tool("Bash", command="sleep 0.3; echo step >> step.txt")],
        },
        {
            "chunk_delay_ms": 10,
            "blocks": [
                tool("Edit", file_path="src/app.py", old_string="Bye, ", new_string="Goodbye, "),
            ],
        },
        {"chunk_delay_ms": 15, "blocks": [{"type": "text", "text": "All done. " * 8}]},
    ]


def well_formed(messages: list[dict[str, Any]]) -> str | None:
    pending: set[str] = set()
    for m in messages:
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text"}]
        if m["role"] == "assistant":
            if pending:
                return f"unanswered tool uses {pending}"
            pending = {b["id"] for b in content if b["type"] == "tool_use"}
        else:
            pending -= {b["tool_use_id"] for b in content if b["type"] == "tool_result"}
    return f"unanswered tool uses {pending}" if pending else None


def phase_at_kill(transcript: Path) -> str:
    """Where the kill landed, from what reached the file."""
    records = [
        json.loads(x) for x in transcript.read_bytes().split(b"\n") if x.strip().startswith(b"{")
    ]
    kinds = [r["type"] for r in records if r["type"] in ("user", "assistant", "tool_result")]
    started = [
        r for r in records if r.get("event") == "tool_started" and r["data"]["name"] == "Bash"
    ]
    answered = {
        b["tool_use_id"]
        for r in records
        if r["type"] == "tool_result"
        for b in r["message"]["content"]
    }
    if started and started[-1]["data"]["toolUseId"] not in answered:
        return "inside Bash"
    if kinds and kinds[-1] in ("user", "tool_result"):
        return "streaming"  # the model was called and had not answered yet
    return "between batches"


def one_kill(index: int, delay: float, base: Path) -> tuple[str, str | None]:
    """Run, kill -9 ``delay`` s after the prompt is acknowledged, resume; a problem or None.

    The killed run uses the scripted model (same engine, no SDK import, so fifty runs stay
    quick); the resume talks to the fake Messages API, which shows what the model is sent.
    """
    root = base / f"run{index}"
    workspace = root / "ws"
    shutil.copytree(FIXTURES / "basic", workspace)
    script = root / "script.json"
    script.write_text(json.dumps(session_script()))
    env = {
        **os.environ,
        "TETHER_DATA_DIR": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "ANTHROPIC_API_KEY": "test",
    }
    command = [sys.executable, "-m", "tether", "run", "--permission-mode", "bypassPermissions"]
    proc = subprocess.Popen(
        [*command, "--model", f"scripted:{script}", PROMPT],
        cwd=workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    acknowledged = False
    while not acknowledged and proc.poll() is None and time.monotonic() < deadline:
        files = list((root / "data").rglob("*.jsonl"))
        acknowledged = bool(files) and PROMPT.encode() in files[0].read_bytes()
        time.sleep(0.005)
    time.sleep(delay)
    proc.kill()
    proc.wait()
    files = list((root / "data").rglob("*.jsonl"))
    if not files:
        return "none", "no transcript was written"
    session = files[0].stem
    phase = phase_at_kill(files[0])
    return phase, resume_and_check(session, workspace, env, command, acknowledged)


def resume_and_check(
    session: str, workspace: Path, env: dict[str, str], command: list[str], acknowledged: bool
) -> str | None:
    with FakeAnthropicServer([[{"type": "text", "text": "Resumed."}]]) as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        done = subprocess.run(
            [*command, "--output-format", "json", "--resume", session, "continue please"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            return f"resume failed ({done.returncode}): {done.stderr[-800:]}"
        if json.loads(done.stdout)["result"] != "Resumed.":
            return f"unexpected result: {done.stdout}"
        messages = api.requests[0]["messages"]
    problem = well_formed(messages)
    if problem:
        return problem
    if acknowledged and PROMPT not in json.dumps(messages[0]):
        return "the acknowledged prompt was lost"
    if "continue please" not in json.dumps(messages[-1]):
        return "the new prompt is missing"
    return None


@pytest.mark.timeout(900)
def test_kill_nine_at_random_points_then_resume(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    # The scripted session takes about 1.1 s after the prompt is on disk.
    delays = [rng.uniform(0.0, 1.3) for _ in range(KILLS)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda a: one_kill(a[0], a[1], tmp_path), enumerate(delays)))
    failures = [
        f"kill #{i} after {d:.3f}s ({phase}): {problem}"
        for i, (d, (phase, problem)) in enumerate(zip(delays, outcomes, strict=True))
        if problem
    ]
    assert not failures, "\n".join(failures)
    phases = [phase for phase, _ in outcomes]
    for wanted in ("streaming", "between batches", "inside Bash"):
        assert phases.count(wanted) >= 3, f"too few kills {wanted}: {phases}"
