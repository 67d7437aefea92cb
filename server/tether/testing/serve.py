"""``python -m tether.testing.fake_anthropic`` (or ``fake_openai``): a fake model server in a
process of its own, for editors' end-to-end tests and benches."""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from tether.providers.script import load_script
from tether.testing.sse import FakeModelServer


def serve_main(server_class: type[FakeModelServer], argv: Sequence[str] | None = None) -> int:
    """``python -m ... --script FILE [--port N] [--port-file PATH] [--timings PATH]
    [--summary-reply TEXT]``: serve until SIGTERM.

    Prints ``READY <base_url>`` once listening. Exits 0 on SIGTERM/SIGINT if the script was
    consumed without errors, else prints the problems to stderr and exits 1. ``--timings``:
    when a request arrived and when its answer ended (``time.monotonic``, a clock all
    processes share), written there as JSON on exit, for benches that keep the fake API in a
    process of its own as the real one is.
    """
    parser = argparse.ArgumentParser(description=f"Serve a script as a {server_class.label}.")
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path, help="write the port number here once listening")
    parser.add_argument("--timings", type=Path, help="write request and answer times here")
    parser.add_argument("--summary-reply", help="answer compaction requests with this summary")
    args = parser.parse_args(argv)
    # A process of its own keeps every request it parsed (for ``problems`` and inspection):
    # acyclic JSON that reference counting frees, which the cyclic GC would otherwise walk
    # in full again and again (a 1,000-request session's fake spent half its time there).
    gc.disable()
    server = server_class(load_script(args.script), port=args.port)
    server.summary_reply = args.summary_reply
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    base_url = server.start()
    if args.port_file is not None:
        port_file: Path = args.port_file
        tmp = port_file.with_name(port_file.name + ".tmp")
        tmp.write_text(str(server.port), encoding="utf-8")
        tmp.replace(port_file)
    print(f"READY {base_url}", flush=True)
    # Polling keeps the main thread in Python code, so the signal handler runs promptly.
    while not stopping.wait(0.1):
        pass
    server.stop()
    if args.timings is not None:
        timings = {"requests": server.request_times, "answered": server.response_end_times}
        Path(args.timings).write_text(json.dumps(timings), encoding="utf-8")
    problems = server.problems()
    for problem in problems:
        print(f"{server_class.label}: {problem}", file=sys.stderr)
    return 1 if problems else 0
