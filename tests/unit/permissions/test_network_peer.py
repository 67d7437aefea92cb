"""Who may use a command's proxy (``tether.network.peer``): real processes, real sockets.
A descendant of the command's process is served, at any depth within the bound; its
parent, an unrelated process and a vanished pid are not; the refusal is reported."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

from tether.network.hosts import Verdict
from tether.network.peer import Lineage, descends, parent_of, peer_pid
from tether.network.proxy import FilteringProxy, listening_socket

CHILD = "import time; time.sleep(30)"
GRANDCHILD = (
    "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; "
    "time.sleep(30)']); print(p.pid, flush=True); p.wait()"
)


def test_descent_follows_parents_within_the_bound() -> None:
    with subprocess.Popen([sys.executable, "-c", GRANDCHILD], stdout=subprocess.PIPE) as child:
        try:
            assert child.stdout is not None
            grandchild = int(child.stdout.readline())
            assert parent_of(grandchild) == child.pid
            assert descends(grandchild, child.pid) and descends(grandchild, os.getpid())
            assert descends(child.pid, child.pid)
            assert not descends(os.getpid(), child.pid)  # a parent is not a descendant
            assert not descends(grandchild, child.pid, max_depth=0)
            assert descends(grandchild, child.pid, max_depth=1)
        finally:
            child.kill()
    assert parent_of(child.pid) is None and not descends(child.pid, os.getpid())  # reaped


def test_the_peer_of_a_unix_socket_is_the_process_that_connected() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert peer_pid(left) == os.getpid()
    plain = socket.socket(socket.AF_UNIX)
    with plain:
        assert peer_pid(plain) is None  # not connected: nobody


async def _refused_or_served(root: int, tmp_path: Path) -> tuple[bytes, list[str]]:
    async def decide(host: str, port: int) -> Verdict:
        return Verdict(False, "not in the test's list")

    lineage = Lineage()
    proxy = FilteringProxy(decide, admission=lineage)
    path = str(tmp_path / f"{root}.sock")
    listener = listening_socket(path)
    serving = asyncio.create_task(proxy.serve(listener))
    try:
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(b"GET http://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n")
        await writer.drain()
        lineage.own(root)  # the command's pid may come after its first connection
        try:
            answer = await asyncio.wait_for(reader.read(), 10)
        except ConnectionResetError:  # closed with the request unread: refused all the same
            answer = b""
        writer.close()
        return answer, [f"{b.host}: {b.why}" for b in proxy.blocked]
    finally:
        proxy.close()
        lineage.close()
        listener.close()
        serving.cancel()


async def test_only_the_commands_own_processes_are_served(tmp_path: Path) -> None:
    answer, blocked = await _refused_or_served(os.getpid(), tmp_path)
    assert answer.startswith(b"HTTP/1.1 403"), answer  # served: the rules answer
    assert not any("outside" in line for line in blocked), blocked

    other = await asyncio.create_subprocess_exec(sys.executable, "-c", CHILD)
    try:
        answer, blocked = await _refused_or_served(other.pid, tmp_path)
    finally:
        other.kill()
        await other.wait()
    assert answer == b""  # closed before a word
    assert blocked == ["network proxy: refused a connection from outside this command"]
