"""What the sandbox's network proxy costs: per connection and per MB, against a direct one.

One run, one machine, one local registry (``tether.testing.fake_registry``, reached as
``registry.test`` through the proxy's resolver). The same client script runs:

- on the host, straight to the registry (the baseline);
- in the sandbox, through the proxy with ``CONNECT`` (how HTTPS goes: a tunnel relayed by
  the gate's forwarder and the daemon's proxy);
- in the sandbox, through the proxy with a plain absolute-URI request (how HTTP goes).

Per connection: connect, one small request and its answer, close (``--connections`` of
them, one after another; the first one's decision is made by the settings' list, then
reused). Those through the proxy include its check of who connects (``network/peer.py``);
that check alone is also timed, on a peer three processes below the daemon (a sandbox's
gate sits as deep below its ``bwrap``), and printed against the proxy's cost. Per MB: one ``--megabytes`` body read to the end. Times are taken inside the
client, so the sandbox's own start is not counted; the median of ``--rounds`` interleaved
rounds is printed, with the load average (wall times on a loaded machine are noisy).

    python bench/network.py [--connections 200] [--megabytes 64] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

CLIENT = r"""
import json, os, socket, sys, time
mode, host, port, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
proxy = os.environ.get("http_proxy", "").rsplit(":", 1)

def open_to(path):
    if mode == "direct":
        s = socket.create_connection(("127.0.0.1", port))
        return s, f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", int(proxy[1])))
    if mode == "connect":
        s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(4096)
        assert head.split()[1] == b"200", head
        return s, f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    return s, f"GET http://{host}:{port}{path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"

def fetch(path):
    s, request = open_to(path)
    s.sendall(request.encode())
    got = 0
    while chunk := s.recv(1 << 18):
        got += len(chunk)
    s.close()
    return got

fetch("/hello")  # the decision, and warm caches
start = time.perf_counter()
for _ in range(n):
    fetch("/hello")
per_connection = (time.perf_counter() - start) / n
start = time.perf_counter()
got = fetch(f"/bytes/{size}")
assert got >= size, got
per_mb = (time.perf_counter() - start) / (size / 1e6)
print("RESULT " + json.dumps({"per_connection": per_connection, "per_mb": per_mb}))
"""


async def measure(connections: int, megabytes: int, rounds: int) -> dict[str, Any]:
    from tether.sandbox import BwrapSandbox, probe
    from tether.settings.model import NetworkSettings, SandboxSettings
    from tether.testing.fake_registry import FakeRegistry
    from tether.tools.shell import run_shell

    if not probe().available:
        return {"problem": probe().problem}
    size = megabytes * 1_000_000
    runs: dict[str, list[dict[str, float]]] = {"direct": [], "connect": [], "plain": []}
    with FakeRegistry() as registry, tempfile.TemporaryDirectory() as tmp:
        ws = Path(os.path.realpath(tmp))
        (ws / "client.py").write_text(CLIENT)
        args = ["registry.test", str(registry.port), str(connections), str(size)]
        settings = SandboxSettings(network=NetworkSettings(allowed_domains=["registry.test"]))
        sandbox = BwrapSandbox(ws, settings, linger_s=0)
        env = {**os.environ, "TETHER_PROXY_RESOLVE": "registry.test=127.0.0.1"}
        try:
            for _ in range(rounds):  # interleaved: a load spike hits every mode alike
                host = await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(ws / "client.py"),
                    "direct",
                    *args,
                    stdout=asyncio.subprocess.PIPE,
                )
                stdout, _ = await host.communicate()
                runs["direct"].append(_result(stdout.decode()))
                for mode in ("connect", "plain"):
                    with sandbox.session(ws, env) as confined:
                        command = f"{sys.executable} client.py {mode} {' '.join(args)}"
                        done = await run_shell(
                            command,
                            cwd=ws,
                            timeout_s=600,
                            max_output_chars=10_000,
                            wrap=confined,
                            pass_fds=confined.pass_fds,
                            started=confined.started,
                        )
                    runs[mode].append(_result(done.output))
        finally:
            sandbox.close()
        check = await peer_check(connections, ws)
    return {
        **{
            mode: {key: statistics.median(r[key] for r in got) for key in got[0]}
            for mode, got in runs.items()
        },
        "peer": {"per_connection": check},
    }


PEER = "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(30)"


async def peer_check(n: int, where: Path) -> float:
    """Seconds per ``SO_PEERCRED`` read and walk up ``/proc`` to this process (median of
    five runs of ``n``), for a peer three processes down."""
    import socket
    import time

    from tether.network.peer import descends, peer_pid

    path = str(where / "peer.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    inner = f"{sys.executable} -c '{PEER}' {path}"
    chain = await asyncio.create_subprocess_exec(
        "sh", "-c", f'sh -c "{inner}; :"; :', start_new_session=True
    )
    try:
        conn, _ = await asyncio.to_thread(listener.accept)
        with conn:
            times: list[float] = []
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(n):
                    pid = peer_pid(conn)
                    assert pid is not None and descends(pid, os.getpid())
                times.append((time.perf_counter() - start) / n)
    finally:
        listener.close()
        os.killpg(chain.pid, signal.SIGKILL)  # the whole chain
        await chain.wait()
    return statistics.median(times)


def _result(text: str) -> dict[str, float]:
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(f"the client failed:\n{text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    a = parser.parse_args()
    got = asyncio.run(measure(a.connections, a.megabytes, a.rounds))
    if "problem" in got:
        raise SystemExit(f"no sandbox here: {got['problem']}")
    base = got["direct"]
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"{'':24}{'per connection':>16}{'added':>10}{'per MB':>12}{'ratio':>8}")
    for mode, label in (
        ("direct", "direct (host)"),
        ("connect", "proxy, CONNECT"),
        ("plain", "proxy, plain HTTP"),
    ):
        r = got[mode]
        added = ms(r["per_connection"] - base["per_connection"]) if mode != "direct" else "-"
        print(
            f"{label:24}{ms(r['per_connection']):>16}{added:>10}{ms(r['per_mb']):>12}"
            f"{r['per_mb'] / base['per_mb']:>7.1f}x"
        )
    check = got["peer"]["per_connection"]
    share = check / (got["connect"]["per_connection"] - base["per_connection"])
    print(
        f"{'peer check alone':24}{ms(check):>16}"
        f"  ({share:.1%} of the proxy's added cost per connection)"
    )


if __name__ == "__main__":
    main()
