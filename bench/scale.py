"""Many sessions on one daemon: throughput, completeness, memory, and an editor that never
waits for the agent.

The real daemon (``tether serve``) over stdio, driven by a lean JSON-RPC client in this
process (framing and ``json`` only, so the client's own cost stays small next to the
daemon's: both share the machine's cores). One workspace; session ``n`` owns the file
``own/sN.py``. Every session prompts at once; each prompt is four model round-trips: Read
its file, Edit it (through ``workspace/applyEdit``; the file is not open, so the daemon also
writes it), a sandboxed Bash ``echo``, a text answer. The model is a strict fake Messages
API in a process of its own (``bench/_fake_sessions.py``: one script per session, routed by
a tag in the prompt), answering each request ``--latency-ms`` (50) after it arrived.

Printed, for each count of sessions (``--sessions 50,200``):

- wall time from the first prompt sent to the last answered, round-trips (model requests)
  per second (target >= 100/s at 50 sessions), and whether every edit is on disk
- the harness's own time per round-trip: from the end of one answer of the fake to the next
  request of the same session (tool time included: the tools are Tether's), median and p99;
  and the share of the fake's service time (latency included), which is not Tether's
- the daemon's peak RSS (``VmHWM``; target <= 150 MiB at 50) and its CPU time, next to this
  client's and the fake's, so what a loaded machine lends to others is visible

Then the editor's side (``--editor-sessions``, 20): while that many sessions stream, the
editor types into an open buffer and asks for code actions every ~20 ms: ``didChange`` ->
processed (bounded by the answer to a ``textDocument/codeAction`` sent right after it on the
same pipe: the daemon reads its messages in order) and ``codeAction`` -> answered alone,
p50/p99 (target p99 <= 10 ms).

With ``--ref REF`` (e.g. ``main``), each count is also run with the daemon of that commit
(its ``server/`` extracted with ``git archive``, first on the daemon's ``PYTHONPATH``),
interleaved with this tree's ``--repeat`` times, and the medians' ratios are printed: on a
machine others load, only numbers of the same run compare.

    python bench/scale.py [--sessions 50,200] [--prompts 1] [--latency-ms 50]
        [--editor-sessions 20] [--ref main] [--repeat 3] [--py-spy FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _fake_sessions import own_file
from _util import summary

ROOT = Path(__file__).parent.parent
FAKE = Path(__file__).parent / "_fake_sessions.py"
FIXTURE = Path(__file__).parent.parent / "tests" / "fixtures" / "workspaces" / "basic"
DAEMON = [sys.executable, "-m", "tether", "serve"]
MODEL = "anthropic:claude-sonnet-4-6"
PROFILE: list[Path] = []
"""Where py-spy writes the daemon's profile of the measured part (``--py-spy``)."""


class Client:
    """A lean LSP client: Content-Length frames of JSON, nothing else."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.updates = 0
        self.unexpected: list[str] = []
        self.reader: asyncio.Task[None] | None = None

    async def start(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            env=env,
            limit=1 << 24,
        )
        self.reader = asyncio.create_task(self._read())

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        body = json.dumps(message, separators=(",", ":")).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_future(self, method: str, params: Any) -> asyncio.Future[Any]:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any, timeout: float = 600) -> Any:
        return await asyncio.wait_for(self.request_future(method, params), timeout)

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            message = json.loads(await stdout.readexactly(length))
            self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            future = self.pending.pop(message["id"], None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]))
                else:
                    future.set_result(message.get("result"))
            return
        if "id" not in message:
            if method == "tether/sessionUpdate":
                self.updates += 1
            return
        result: Any = None
        if method == "workspace/applyEdit":
            # The agent's files are not open here: the editor takes the edit and the daemon
            # writes the file (checked on disk at the end).
            result = {"applied": True}
        elif method == "workspace/configuration":
            result = [None] * len(message["params"].get("items", []))
        elif method not in ("client/registerCapability", "window/workDoneProgress/create"):
            self.unexpected.append(method)
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def stop(self) -> None:
        assert self.process is not None
        try:
            await self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            await asyncio.wait_for(self.process.wait(), 30)
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
            if self.reader is not None:
                self.reader.cancel()


def capabilities() -> dict[str, Any]:
    return {
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
            "workspaceFolders": True,
        },
        "textDocument": {
            "codeAction": {
                "codeActionLiteralSupport": {
                    "codeActionKind": {"valueSet": ["", "quickfix", "refactor", "source"]}
                }
            }
        },
        "general": {"positionEncodings": ["utf-16"]},
        "experimental": {"tether": {"sessionUpdates": True, "permissionRequest": True}},
    }


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_s(pid: int, *, children: bool = False) -> float:
    """A process's CPU time; ``children``: that of its children it waited for (the
    sandboxes and commands of Bash calls)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    at = 13 if children else 11
    return (int(fields[at]) + int(fields[at + 1])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Workspace:
    tmp: Path
    sessions: int
    root: Path = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.tmp / "ws"
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(FIXTURE, self.root)
        (self.root / "own").mkdir()
        for n in range(self.sessions):
            own_file(self.root, n).write_text(f"# session {n}\ncount = 0\n", encoding="utf-8")
        (self.root / "editor.py").write_text("def f():\n    return 1\n", encoding="utf-8")

    def env(self, base_url: str, server: Path | None) -> dict[str, str]:
        path = {"PYTHONPATH": str(server)} if server is not None else {}
        return {
            **os.environ,
            **path,
            "HOME": str(self.tmp / "home"),
            "TETHER_DATA_DIR": str(self.tmp / "data"),
            "XDG_CONFIG_HOME": str(self.tmp / "config"),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": base_url,
        }


class Fake:
    def __init__(self, ws: Workspace, prompts: int, latency_ms: float) -> None:
        self.timings = ws.tmp / "timings.json"
        argv = [sys.executable, str(FAKE), "--root", str(ws.root), "--sessions"]
        argv += [str(ws.sessions), "--prompts", str(prompts), "--latency-ms", str(latency_ms)]
        argv += ["--timings", str(self.timings)]
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        ready = self.process.stdout.readline().split()
        if ready[:1] != ["READY"]:
            raise SystemExit(f"the fake API did not start: {ready}")
        self.base_url = ready[1]

    def stop(self) -> tuple[list[list[tuple[float, float]]], float]:
        self.process.send_signal(signal.SIGTERM)
        if self.process.wait(timeout=60) != 0:
            raise SystemExit("the fake API saw problems (above)")
        raw = json.loads(self.timings.read_text(encoding="utf-8"))
        return [[(a, b) for a, b in s] for s in raw["served"]], float(raw["cpu_s"])


@dataclass
class Editing:
    """The editor typing and asking for code actions while sessions stream."""

    client: Client
    path: Path
    change_then_action: list[float] = field(default_factory=list)
    action_alone: list[float] = field(default_factory=list)
    version: int = 1

    def open(self) -> None:
        text = self.path.read_text(encoding="utf-8")
        item = {"uri": self.path.as_uri(), "languageId": "python", "version": 1, "text": text}
        self.client.notify("textDocument/didOpen", {"textDocument": item})

    def _action_params(self) -> dict[str, Any]:
        at = {"line": 0, "character": 4}
        return {
            "textDocument": {"uri": self.path.as_uri()},
            "range": {"start": at, "end": at},
            "context": {"diagnostics": [], "triggerKind": 1},
        }

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.version += 1
            change = {"range": _range(1, 11, 1, 12), "text": str(self.version % 10)}
            started = time.perf_counter()
            self.client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": self.path.as_uri(), "version": self.version},
                    "contentChanges": [change],
                },
            )
            await self.client.request("textDocument/codeAction", self._action_params(), 30)
            self.change_then_action.append(time.perf_counter() - started)
            await asyncio.sleep(0.01)
            started = time.perf_counter()
            await self.client.request("textDocument/codeAction", self._action_params(), 30)
            self.action_alone.append(time.perf_counter() - started)
            await asyncio.sleep(0.01)


def _range(a: int, b: int, c: int, d: int) -> dict[str, Any]:
    return {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}


def profile(pid: int) -> subprocess.Popen[bytes]:
    """py-spy sampling the daemon (every thread, CPU only) until interrupted."""
    spy = Path(sys.executable).with_name("py-spy")
    argv = [str(spy), "record", "--pid", str(pid), "-r", "100", "-f", "raw", "--gil"]
    argv += ["-o", str(PROFILE[0])]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@dataclass
class Outcome:
    sessions: int
    wall_s: float
    round_trips: int
    harness: list[float]
    after: dict[str, list[float]]
    fake_busy_s: float
    edits_in_place: int
    hwm_mib: float
    daemon_cpu_s: float
    children_cpu_s: float
    client_cpu_s: float
    fake_cpu_s: float
    updates: int
    editing: Editing | None


async def run(
    tmp: Path,
    sessions: int,
    prompts: int,
    latency_ms: float,
    *,
    editor: bool = False,
    server: Path | None = None,
) -> Outcome:
    ws = Workspace(tmp / f"n{sessions}{'e' if editor else ''}", sessions)
    ws.tmp.mkdir(parents=True, exist_ok=True)
    fake = Fake(ws, prompts, latency_ms)
    client = Client()
    try:
        await client.start(DAEMON, ws.env(fake.base_url, server), ws.tmp / "daemon.log")
        init = {
            "processId": os.getpid(),
            "capabilities": capabilities(),
            "rootUri": ws.root.as_uri(),
            "workspaceFolders": [{"uri": ws.root.as_uri(), "name": "ws"}],
            "initializationOptions": {"model": MODEL, "permissionMode": "bypassPermissions"},
        }
        await client.request("initialize", init, timeout=60)
        client.notify("initialized", {})
        ids = [
            str((await client.request("tether/newSession", {}))["sessionId"])
            for _ in range(sessions)
        ]
        editing = Editing(client, ws.root / "editor.py") if editor else None
        if editing is not None:
            editing.open()
        await asyncio.sleep(2.0)  # the daemon's background warm-up (SDK imports) is done
        cpu_before, client_before = cpu_s(client.pid), time.process_time()
        children_before = cpu_s(client.pid, children=True)
        spy = profile(client.pid) if PROFILE else None
        stop = asyncio.Event()
        typing = asyncio.create_task(editing.run(stop)) if editing is not None else None

        async def one(n: int) -> None:
            for p in range(prompts):
                text = f"[scale-{n}] prompt {p}: read, edit, echo."
                params = {"sessionId": ids[n], "prompt": [{"type": "text", "text": text}]}
                result = await client.request("tether/prompt", params)
                if result.get("stopReason") != "end_turn":
                    raise SystemExit(f"session {n} prompt {p} ended: {result}")

        started = time.monotonic()
        await asyncio.gather(*(one(n) for n in range(sessions)))
        wall = time.monotonic() - started
        stop.set()
        if typing is not None:
            await typing
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        daemon_cpu = cpu_s(client.pid) - cpu_before
        children_cpu = cpu_s(client.pid, children=True) - children_before
        client_cpu = time.process_time() - client_before
        hwm = status_kib(client.pid, "VmHWM") / 1024
        await client.stop()
    finally:
        if client.process is not None and client.process.returncode is None:
            client.process.kill()
        served, fake_cpu = fake.stop()
    if client.unexpected:
        raise SystemExit(f"unexpected requests from the daemon: {client.unexpected[:5]}")
    in_place = sum(
        own_file(ws.root, n).read_text(encoding="utf-8").endswith(f"count = {prompts}\n")
        for n in range(sessions)
    )
    harness: list[float] = []
    after: dict[str, list[float]] = {"Read": [], "Edit": [], "Bash": [], "prompt": []}
    busy = 0.0
    for times in served:
        times.sort()
        busy += sum(end - arrived for arrived, end in times)
        for i in range(len(times) - 1):
            gap = times[i + 1][0] - times[i][1]
            kind = ("Read", "Edit", "Bash", "prompt")[i % 4]
            after[kind].append(gap)
            if kind != "prompt":  # the next prompt's gap is this client's, not the daemon's
                harness.append(gap)
    return Outcome(
        sessions,
        wall,
        sum(len(t) for t in served),
        harness,
        after,
        busy,
        in_place,
        hwm,
        daemon_cpu,
        children_cpu,
        client_cpu,
        fake_cpu,
        client.updates,
        editing,
    )


def report(out: Outcome, latency_ms: float) -> None:
    rate = out.round_trips / out.wall_s
    print(
        f"{out.sessions} sessions at once, {out.round_trips} round-trips "
        f"(fake latency {latency_ms:.0f} ms; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} CPUs):"
    )
    print(f"  wall {out.wall_s:.2f} s = {rate:.0f} round-trips/s  [target >= 100/s at 50]")
    print(f"  edits in place: {out.edits_in_place}/{out.sessions}")
    print(
        f"  harness per round-trip (answer end -> next request, tools included): {summary(out.harness)}"
    )
    for kind in ("Read", "Edit", "Bash"):
        print(f"    after {kind}: {summary(out.after[kind])}")
    print(
        f"  fake service time (latency included) {out.fake_busy_s:.1f} s summed over requests; "
        f"{out.updates} sessionUpdates received"
    )
    print(
        f"  daemon peak RSS {out.hwm_mib:.1f} MiB  [target <= 150 MiB at 50]; CPU: daemon "
        f"{out.daemon_cpu_s:.2f} s ({out.daemon_cpu_s / out.round_trips * 1000:.1f} ms per "
        f"round-trip), its Bash sandboxes {out.children_cpu_s:.2f} s, this client "
        f"{out.client_cpu_s:.2f} s, fake {out.fake_cpu_s:.2f} s (whole life) in "
        f"{out.wall_s:.2f} s of wall"
    )
    if out.editing is not None:
        e = out.editing
        print(f"  didChange + codeAction right after it: {summary(e.change_then_action)}")
        print(f"  codeAction alone: {summary(e.action_alone)}  [target p99 <= 10 ms]")


def extract(ref: str) -> Path:
    """``server/`` of ``ref``, in a directory of its own (under /var/tmp: the sandbox hides
    /tmp, and the reference tree's gate must be readable inside)."""
    into = Path(tempfile.mkdtemp(prefix="tether-bench-ref-", dir="/var/tmp"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "server"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _quantile(out: Outcome, q: float, *, after_change: bool = False) -> float:
    assert out.editing is not None
    e = out.editing
    ordered = sorted(e.change_then_action if after_change else e.action_alone)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def compare(ref: str, theirs: list[Outcome], ours: list[Outcome]) -> None:
    def med(outs: list[Outcome], value: Callable[[Outcome], float]) -> float:
        return statistics.median(value(o) for o in outs)

    rows: list[tuple[str, Callable[[Outcome], float]]] = [
        ("round-trips/s", lambda o: o.round_trips / o.wall_s),
        ("harness per round-trip, median (ms)", lambda o: statistics.median(o.harness) * 1e3),
        ("daemon CPU per round-trip (ms)", lambda o: o.daemon_cpu_s / o.round_trips * 1e3),
        ("daemon peak RSS (MiB)", lambda o: o.hwm_mib),
    ]
    if ours[0].editing is not None:
        rows += [
            ("codeAction alone, median (ms)", lambda o: _quantile(o, 0.5) * 1e3),
            ("codeAction alone, p99 (ms)", lambda o: _quantile(o, 0.99) * 1e3),
            (
                "didChange + codeAction, median (ms)",
                lambda o: _quantile(o, 0.5, after_change=True) * 1e3,
            ),
            (
                "didChange + codeAction, p99 (ms)",
                lambda o: _quantile(o, 0.99, after_change=True) * 1e3,
            ),
        ]
    print(f"  {ours[0].sessions} sessions, medians of {len(ours)} interleaved runs:")
    print(f"    {'':38} {ref:>10} {'this tree':>10}  ratio")
    for label, value in rows:
        a, b = med(theirs, value), med(ours, value)
        print(f"    {label:38} {a:10.1f} {b:10.1f}  {b / a:.2f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", default="50,200")
    parser.add_argument("--prompts", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--editor-sessions", type=int, default=20)
    parser.add_argument("--py-spy", type=Path, help="profile the daemon into this file")
    parser.add_argument("--ref", help="also run the daemon of this commit, interleaved")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each with --ref")
    args = parser.parse_args()
    if args.py_spy is not None:
        PROFILE.append(args.py_spy)
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        counts = [int(c) for c in args.sessions.split(",") if c]
        if args.ref:
            server = extract(args.ref) / "server"
            runs = [(count, False) for count in counts]
            if args.editor_sessions:
                runs.append((args.editor_sessions, True))
            try:
                for count, editor in runs:
                    theirs: list[Outcome] = []
                    ours: list[Outcome] = []
                    for _ in range(args.repeat):
                        theirs.append(
                            await run(
                                tmp,
                                count,
                                args.prompts,
                                args.latency_ms,
                                editor=editor,
                                server=server,
                            )
                        )
                        ours.append(
                            await run(tmp, count, args.prompts, args.latency_ms, editor=editor)
                        )
                    report(ours[-1], args.latency_ms)
                    compare(args.ref, theirs, ours)
            finally:
                shutil.rmtree(server.parent, ignore_errors=True)
            return
        for count in counts:
            report(await run(tmp, count, args.prompts, args.latency_ms), args.latency_ms)
        if args.editor_sessions:
            out = await run(tmp, args.editor_sessions, args.prompts, args.latency_ms, editor=True)
            report(out, args.latency_ms)


if __name__ == "__main__":
    asyncio.run(main())
