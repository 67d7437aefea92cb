"""A command's proxy serves that command only: another sandbox of the same workspace that
learns its socket's name (here told it outright) is refused, and the owner still works."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tether.sandbox import shell_sandbox
from tether.sandbox.bwrap import PROXY_DIR
from tether.sandbox.outbound import CommandProxy
from tether.testing.fake_registry import FakeRegistry

from .conftest import MakeHarness, needs_bwrap, text_of
from .test_network_hosts import _network  # pyright: ignore[reportPrivateUsage]
from .test_prepared_sandbox import sandbox_of

pytestmark = needs_bwrap

STEAL = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected")
data = b""
try:
    s.sendall(b"GET http://registry.test:%s/stolen HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2].encode())
    while chunk := s.recv(65536):
        data += chunk
except OSError as e:  # closed before or while it spoke
    print("error:", type(e).__name__)
print("answer:", repr(data[:60]))
"""


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRegistry]:
    with FakeRegistry() as reg:
        monkeypatch.setenv("TETHER_PROXY_RESOLVE", "registry.test=127.0.0.1")
        yield reg


@pytest.fixture
def proxies(monkeypatch: pytest.MonkeyPatch) -> list[CommandProxy]:
    """Every command's proxy, in the order their commands started."""
    made: list[CommandProxy] = []

    class Recorded(CommandProxy):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # pyright: ignore[reportArgumentType]
            made.append(self)

    monkeypatch.setattr(shell_sandbox, "CommandProxy", Recorded)
    return made


async def test_another_commands_sandbox_is_refused_by_a_proxy_it_names(
    make_harness: MakeHarness, registry: FakeRegistry, proxies: list[CommandProxy]
) -> None:
    a = make_harness(allow=("Bash",), answer="reject_once")
    _network(a, allowed=("registry.test",))
    b = make_harness(allow=("Bash",), answer="reject_once")
    b.ctx.config.shell_sandbox = a.ctx.config.shell_sandbox  # one workspace sandbox
    _network(b)
    (b.ctx.cwd / "steal.py").write_text(STEAL)
    port = registry.port
    wait = "for i in $(seq 400); do [ -e go ] && break; sleep 0.05; done"
    first = asyncio.create_task(
        a.call("Bash", command=f"{wait}; curl -sS http://registry.test:{port}/hello")
    )
    try:
        for _ in range(500):
            if proxies:
                break
            await asyncio.sleep(0.01)
        assert len(proxies) == 1, "A's command did not start its proxy"
        theirs = str(PROXY_DIR / proxies[0].name)

        out = await b.call("Bash", command=f"python3 steal.py {theirs} {port}; echo rc=$?")
        text = text_of(out)
        assert "connected" in text and "answer: b''" in text, text  # closed, nothing said
        assert "rc=0" in text, text
        (a.ctx.cwd / "go").write_text("")
        mine = text_of(await asyncio.wait_for(first, 60))
    finally:
        (a.ctx.cwd / "go").write_text("")
        if not first.done():
            await asyncio.wait_for(first, 60)
        sandbox_of(a).close()
    assert "hello from the registry" in mine, mine
    assert "network proxy: refused a connection from outside this command" in mine, mine
    assert registry.log and all("stolen" not in str(entry) for entry in registry.log)
    assert a.answers.asked == [] and b.answers.asked == []


async def test_a_background_command_and_what_it_leaves_running_are_its_own(
    make_harness: MakeHarness, registry: FakeRegistry
) -> None:
    h = make_harness(allow=("Bash",), answer="reject_once")
    _network(h, allowed=("registry.test",))
    url = f"http://registry.test:{registry.port}/hello"
    # a grandchild that outlives its shell is re-parented inside the sandbox: still served
    settle = (
        "for i in $(seq 400); do grep -q hello orphan.txt 2>/dev/null && break; sleep 0.05; done"
    )
    command = f"(sh -c 'curl -sS {url} > orphan.txt' &) ; curl -sS {url}; {settle}"
    out = await h.call("Bash", command=command, run_in_background=True)
    assert not out.failed
    (task,) = h.ctx.tasks.all()
    done = await h.ctx.tasks.wait(task.id, timeout=30)
    assert done is not None and done.finished
    text = done.output_path.read_text()
    assert "hello from the registry" in text and "outside this command" not in text, text
    assert "hello from the registry" in (h.ctx.cwd / "orphan.txt").read_text()
