"""LSP daemon latencies, measured against the real daemon over stdio:

- daemon start to the ``initialize`` result (median of 10 spawns; target < 600 ms)
- ``tether/prompt`` sent to the first model request at the fake API (target < 5 ms)
- model text delta flushed by the fake API to ``tether/sessionUpdate`` at the client
  (p50 and p99; target p99 < 5 ms)
- idle RSS of the daemon with one and with ten workspace folders

    python bench/lsp_latency.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms, summary

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


async def main() -> None:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
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
    os.sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
