"""Many sessions' fake Messages API in one process of its own, for ``bench/scale.py``.

Each session has its own strict ``FakeAnthropicServer`` script (checked and rendered as the
real API does); one listening socket routes every request to its session's fake by the tag
``[scale-N]`` in the request's first message. Every answer starts ``--latency-ms`` after its
request arrived (the model's time to first byte). Prints ``READY <base_url>``; on SIGTERM
writes, as JSON to ``--timings``: per session, when each request arrived and when its
answer ended (``time.monotonic``, shared by all processes), and this process's CPU time.
Exits 1 if any session's script was not played exactly.

    python bench/_fake_sessions.py --root WS --sessions N --prompts P --latency-ms 50 \
        --timings FILE
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import FrameType
from typing import Any

from tether.providers.script import ScriptTurn
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.sse import FakeModelServer, Reply

TAG = re.compile(r"\[scale-(\d+)\]")


def own_file(root: Path, n: int) -> Path:
    return root / "own" / f"s{n}.py"


def session_script(root: Path, n: int, prompts: int) -> list[Any]:
    """Each prompt: Read the session's own file, Edit it, Bash echo, a text answer."""

    def tool(name: str, **inp: Any) -> list[dict[str, Any]]:
        return [{"type": "tool_use", "name": name, "input": inp}]

    path = str(own_file(root, n))
    turns: list[Any] = []
    for p in range(prompts):
        turns += [
            tool("Read", file_path=path),
            tool(
                "Edit", file_path=path, old_string=f"count = {p}\n", new_string=f"count = {p + 1}\n"
            ),
            tool("Bash", command=f"echo s{n}-{p}"),
            [{"type": "text", "text": f"Session {n}, prompt {p}: done."}],
        ]
    return turns


class SessionRouter(FakeModelServer):
    route = "/v1/messages"
    label = "fake Anthropic API (sessions)"

    def __init__(self, root: Path, sessions: int, prompts: int, latency_s: float) -> None:
        super().__init__([])
        self.latency_s = latency_s
        self.fakes = [
            FakeAnthropicServer(session_script(root, n, prompts)) for n in range(sessions)
        ]
        self.served: list[list[tuple[float, float]]] = [[] for _ in range(sessions)]

    def handle_request(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        arrived = getattr(handler, "arrived", None) or time.monotonic()
        body = json.loads(raw) if raw else {}
        messages = body.get("messages") or [{}]
        found = TAG.search(json.dumps(messages[0].get("content", "")))
        if found is None or int(found.group(1)) >= len(self.fakes):
            self.errors.append(f"a request without a known session tag: {raw[:200]!r}")
            Reply(handler).json(500, {"type": "error", "error": {"type": "api_error"}})
            return
        n = int(found.group(1))
        left = self.latency_s - (time.monotonic() - arrived)
        if left > 0:
            time.sleep(left)
        try:
            self.fakes[n].handle_request(handler, raw)
        finally:
            with self._lock:
                self.served[n].append((arrived, time.monotonic()))

    def respond(self, index: int, turn: ScriptTurn, body: dict[str, Any], reply: Reply) -> None:
        raise AssertionError("the sessions' fakes answer")

    def problems(self) -> list[str]:
        found = list(self.errors)
        for n, fake in enumerate(self.fakes):
            found += [f"session {n}: {problem}" for problem in fake.problems()]
        return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--sessions", type=int, required=True)
    parser.add_argument("--prompts", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--timings", type=Path, required=True)
    args = parser.parse_args()
    gc.disable()  # what it keeps is acyclic JSON (see tether.testing.serve)
    router = SessionRouter(args.root, args.sessions, args.prompts, args.latency_ms / 1000)
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"READY {router.start()}", flush=True)
    while not stopping.wait(0.1):
        pass
    router.stop()
    cpu = time.process_time()
    args.timings.write_text(json.dumps({"served": router.served, "cpu_s": cpu}), encoding="utf-8")
    problems = router.problems()
    for problem in problems[:20]:
        print(f"{router.label}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
