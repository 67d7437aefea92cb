"""LSP daemon latencies, measured against the real daemon over stdio:

- daemon start to the ``initialize`` result (median of 10 spawns; target < 600 ms)
- ``tether/prompt`` sent to the first model request at the fake API (target < 5 ms)
- model text delta flushed by the fake API to ``tether/sessionUpdate`` at the client
  (p50 and p99; target p99 < 5 ms)
- idle RSS of the daemon with one and with ten workspace folders
- ``minimal_edits`` on a 1 MB, 20k-line file with a one-line change (target <= 30 ms),
  against the line diff of the whole texts it used to run (the ratio is printed)
- the longest event-loop stall of the real daemon while its agent edits that file in an
  open buffer (``workspace/applyEdit``, each edit asked about), seen by a heartbeat callback
  on the daemon's loop (target <= 20 ms), and the size of what the editor receives for it

    python bench/lsp_latency.py [--edits-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms, summary

from tether.lsp import textedits
from tether.lsp.testing.editor_client import EditorOptions, FakeEditor
from tether.testing.fake_anthropic import FakeAnthropicServer

FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"
DAEMON = [sys.executable, "-m", "tether", "serve"]


def env_for(tmp: Path, api: FakeAnthropicServer | None = None) -> dict[str, str]:
    env = {
        "TETHER_DATA_DIR": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "ANTHROPIC_API_KEY": "bench",
    }
    if api is not None:
        env["ANTHROPIC_BASE_URL"] = api.base_url
    return env


def folders(tmp: Path, count: int) -> list[Path]:
    out = []
    for i in range(count):
        root = tmp / f"ws{i}"
        shutil.copytree(FIXTURE, root)
        out.append(root)
    return out


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def daemon_pid(editor: FakeEditor) -> int:
    server: Any = editor.client._server  # pyright: ignore[reportPrivateUsage]
    return int(server.pid)


async def startup(tmp: Path, runs: int = 10) -> list[float]:
    roots = folders(tmp / "startup", 1)
    samples = []
    for _ in range(runs):
        editor = FakeEditor(EditorOptions(init_options={"model": "anthropic:claude-sonnet-4-6"}))
        started = time.monotonic()
        await editor.start(DAEMON, roots, env=env_for(tmp))
        samples.append(time.monotonic() - started)
        await editor.stop()
    return samples


async def prompt_and_stream(tmp: Path) -> tuple[list[float], list[float]]:
    deltas_per_turn = 60
    text_turn = {
        "chunk_delay_ms": 2,
        "blocks": [{"type": "text", "text": f"[{i:03d}] "} for i in range(deltas_per_turn // 3)],
    }
    prompts = 11
    with FakeAnthropicServer([text_turn] * prompts) as api:
        editor = FakeEditor(EditorOptions(init_options={"model": "anthropic:claude-sonnet-4-6"}))
        received: list[float] = []
        editor.on_update = lambda p: (
            received.append(time.monotonic())
            if p["update"]["kind"] == "agent_message_chunk"
            else None
        )
        await editor.start(DAEMON, folders(tmp / "stream", 1), env=env_for(tmp, api))
        session = await editor.new_session()
        to_request: list[float] = []
        for i in range(prompts):
            sent = time.monotonic()
            await editor.prompt(session, f"prompt {i}")
            if i > 0:  # the first includes creating the SDK client
                to_request.append(api.request_times[-1] - sent)
        await editor.stop()
        flushed = [t for t, data in api.event_log if '"text_delta"' in data]
        latencies = [r - f for f, r in zip(flushed, received, strict=True)][deltas_per_turn:]
        api.assert_complete()
    return to_request, latencies


async def idle_rss(tmp: Path, count: int) -> float:
    editor = FakeEditor(EditorOptions(init_options={"model": "anthropic:claude-sonnet-4-6"}))
    roots = folders(tmp / f"rss{count}", count)
    await editor.start(DAEMON, roots, env=env_for(tmp))
    for root in roots:  # one session per workspace, so every Workspace is really built
        await editor.new_session(workspaceFolder=root.as_uri())
    await asyncio.sleep(2.5)  # let the background SDK warm-up finish: idle means ready
    value = rss_mib(daemon_pid(editor))
    await editor.stop()
    return value


def big_text() -> str:
    return "".join(
        f"line {i:05d} = compute({i}, 'payload')" + " " * 8 + "\n" for i in range(20_000)
    )


def edit_cost(runs: int = 7) -> tuple[list[float], list[float]]:
    """``minimal_edits`` now, and the whole-text line diff it replaced, on one change."""
    old = big_text()
    new = old.replace("line 12345 = compute(", "line 12345 = compute_fast(", 1)
    trimmed: list[float] = []
    whole: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        edits = textedits.minimal_edits(old, new)
        trimmed.append(time.perf_counter() - started)
        started = time.perf_counter()
        reference = textedits._diff(old, new, "utf-16")  # pyright: ignore[reportPrivateUsage]
        whole.append(time.perf_counter() - started)
        assert edits == reference, (edits, reference)
    return trimmed, whole


# The daemon with a heartbeat on its event loop: a callback every millisecond notes how late
# it ran; stalls over 2 ms are written to a file (monotonic start, length), one a line.
WATCHED_DAEMON = [
    sys.executable,
    "-c",
    """
import asyncio, os, sys, time
out = open(os.environ["BENCH_STALLS"], "a", buffering=1)
run_forever = asyncio.BaseEventLoop.run_forever
def watched(loop):
    last = [time.monotonic()]
    def beat():
        now = time.monotonic()
        if now - last[0] > 0.003:
            out.write(f"{last[0]} {now - last[0] - 0.001}\\n")
        last[0] = now
        loop.call_later(0.001, beat)
    loop.call_soon(beat)
    return run_forever(loop)
asyncio.BaseEventLoop.run_forever = watched
from tether.cli.main import main
sys.exit(main(["serve"]))
""",
]


EDITS = 5


def worst_stall(stalls_file: Path, api: FakeAnthropicServer, response: int) -> float:
    """The longest stall from the end of model response ``response`` (a tool call) to the
    next request (the tool's result)."""
    window = (api.response_end_times[response], api.request_times[response + 1])
    worst = 0.0
    for line in stalls_file.read_text().splitlines():
        began, length = (float(x) for x in line.split())
        if began < window[1] and began + length > window[0]:
            worst = max(worst, length)
    return worst


async def write_stall(tmp: Path) -> float:
    """The longest stall while the agent Writes a new 1 MB file: what the editor gets for
    it is as big as the file (the tool call's input, the question's diff, the result's)."""
    root = folders(tmp / "write", 1)[0]
    target = root / "new_big.py"
    script: list[Any] = [
        [
            {
                "type": "tool_use",
                "name": "Write",
                "input": {"file_path": str(target), "content": big_text()},
            }
        ],
        [{"type": "text", "text": "Written."}],
    ]
    stalls_file = tmp / "write_stalls.txt"
    with FakeAnthropicServer(script) as api:
        editor = FakeEditor(EditorOptions(init_options={"model": "anthropic:claude-sonnet-4-6"}))
        env = {**env_for(tmp, api), "BENCH_STALLS": str(stalls_file)}
        await editor.start(WATCHED_DAEMON, [root], env=env)
        session = await editor.new_session()
        await editor.prompt(session, "write it")
        await editor.stop()
        api.assert_complete()
    assert target.read_text() == big_text(), "the file was not written"
    return worst_stall(stalls_file, api, 0)


def _edit(target: Path, old: str, new: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "tool_use",
            "name": "Edit",
            "input": {"file_path": str(target), "old_string": old, "new_string": new},
        }
    ]


@dataclass
class Stalls:
    worst: list[float]
    """The longest stall of each edit, the first (cold) one first."""
    update_bytes: int
    """The largest ``tool_call_update`` the editor received for an edit, JSON-encoded."""
    question_bytes: int
    """The largest permission question, JSON-encoded."""


async def edit_stall(tmp: Path) -> Stalls:
    """The daemon's longest event-loop stall while its agent's Edit of the big file (open
    in the editor) runs, from the end of the response asking for it to the next request:
    ``EDITS`` edits, each asked about (the editor allows once) and applied to the buffer."""
    root = folders(tmp / "stall", 1)[0]
    target = root / "big.py"
    target.write_text(big_text(), encoding="utf-8")
    slow, fast = "line 12345 = compute(", "line 12345 = compute_fast("
    script: list[Any] = [
        [{"type": "tool_use", "name": "Read", "input": {"file_path": str(target), "limit": 5}}]
    ]
    edit_responses: list[int] = []
    for i in range(EDITS):
        edit_responses.append(len(script))
        script.append(_edit(target, slow, fast) if i % 2 == 0 else _edit(target, fast, slow))
        script.append([{"type": "text", "text": "Edited."}])
    stalls_file = tmp / "stalls.txt"
    with FakeAnthropicServer(script) as api:
        editor = FakeEditor(EditorOptions(init_options={"model": "anthropic:claude-sonnet-4-6"}))
        env = {**env_for(tmp, api), "BENCH_STALLS": str(stalls_file)}
        await editor.start(WATCHED_DAEMON, [root], env=env)
        editor.open(target)
        session = await editor.new_session()
        texts: list[str] = []
        for i in range(EDITS):
            await editor.prompt(session, f"edit {i}")
            texts.append(editor.text(target))
        updates = editor.updates_of(session, "tool_call_update")
        questions = list(editor.permission_requests)
        await editor.stop()
        api.assert_complete()
    for i, text in enumerate(texts):
        assert (fast if i % 2 == 0 else slow) in text, f"edit {i} did not reach the buffer"
    worst = [worst_stall(stalls_file, api, i) for i in edit_responses]
    diffs = [u for u in updates if any(c.get("type") == "diff" for c in u.get("content", []))]
    return Stalls(
        worst,
        max(len(json.dumps(u)) for u in diffs),
        max(len(json.dumps(q)) for q in questions),
    )


async def main(edits_only: bool) -> None:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        if edits_only:
            await edits(tmp)
            return
        starts = await startup(tmp)
        print(f"daemon start -> initialize result: {summary(starts)}  [target median < 600 ms]")
        to_request, deltas = await prompt_and_stream(tmp)
        print(f"tether/prompt -> first model request: {summary(to_request)}  [target < 5 ms]")
        p50 = statistics.median(deltas)
        p99 = sorted(deltas)[int(len(deltas) * 0.99)]
        print(
            f"text delta -> tether/sessionUpdate at the client: p50 {ms(p50)}, p99 {ms(p99)} "
            f"(n={len(deltas)})  [target p99 < 5 ms]"
        )
        one = await idle_rss(tmp, 1)
        ten = await idle_rss(tmp, 10)
        print(f"idle RSS: {one:.1f} MiB with 1 workspace, {ten:.1f} MiB with 10 workspaces")
        await edits(tmp)
    os.sys.stdout.flush()


async def edits(tmp: Path) -> None:
    trimmed, whole = edit_cost()
    ratio = statistics.median(whole) / statistics.median(trimmed)
    print(
        f"minimal_edits, 1 MB / 20k lines, one change: {summary(trimmed)}  [target <= 30 ms]; "
        f"whole-text line diff: median {ms(statistics.median(whole))} ({ratio:.0f}x slower)"
    )
    stalls = await edit_stall(tmp)
    print(
        f"longest daemon event-loop stall while its agent edits that file (open in the "
        f"editor, so through workspace/applyEdit; each edit asked about): first edit "
        f"{ms(stalls.worst[0])}, next {EDITS - 1}: median {ms(statistics.median(stalls.worst[1:]))}, "
        f"max {ms(max(stalls.worst[1:]))}  [target <= 20 ms]"
    )
    print(
        f"largest message to the editor for that edit: tool_call_update "
        f"{stalls.update_bytes} bytes, permission question {stalls.question_bytes} bytes "
        f"(the file is {len(big_text().encode())} bytes)"
    )
    wrote = await write_stall(tmp)
    print(f"longest stall while its agent Writes a new file of that size: {ms(wrote)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits-only", action="store_true", help="only the big-file edit numbers")
    asyncio.run(main(parser.parse_args().edits_only))
