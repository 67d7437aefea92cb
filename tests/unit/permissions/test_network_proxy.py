"""The filtering proxy on its own socket (no sandbox): host patterns, the order of
decisions, one decision per destination, what a client that bends the protocol gets, and
the caller's upstream proxy honoured."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionAnswer, PermissionReply, PermissionRequest
from tether.network.hosts import Verdict, host_matches, host_name, valid_pattern
from tether.network.proxy import FilteringProxy, Upstream, listening_socket, reader_head
from tether.permissions.decision import RuleSet
from tether.permissions.network import HostQuestions, settled
from tether.protocol.updates import Mode
from tether.testing.fake_proxy import FakeProxy
from tether.testing.fake_registry import FakeRegistry
from tether.tools.context import SessionRunState, ToolConfig


@pytest.mark.parametrize(
    ("pattern", "host", "port", "expected"),
    [
        ("pypi.org", "PyPI.org.", 443, True),
        ("pypi.org", "files.pypi.org", 443, False),
        ("*.npmjs.org", "registry.npmjs.org", 443, True),
        ("*.npmjs.org", "npmjs.org", 443, False),
        ("*.npmjs.org", "evilnpmjs.org", 443, False),
        ("github.com:443", "github.com", 22, False),
        ("github.com:*", "github.com", 22, True),
        ("[::1]:8080", "::1", 8080, True),
        ("127.0.0.1", "127.1", 80, True),
        ("127.0.0.1", "2130706433", 80, True),
        ("127.0.0.1", "0x7f000001", 80, True),
        ("127.0.0.1", "0177.0.0.1", 80, True),
        ("127.0.0.1", "0.0.0.0", 80, True),
        ("127.0.0.1", "::ffff:7f00:1", 80, True),
        ("[::ffff:127.0.0.1]", "127.0.0.1", 80, True),
        ("::1", "0:0:0:0:0:0:0:1", 80, True),
        ("::1", "::", 80, True),
    ],
)
def test_host_patterns(pattern: str, host: str, port: int, expected: bool) -> None:
    assert host_matches(pattern, host, port) is expected


def test_bad_patterns_say_what_is_wrong() -> None:
    assert valid_pattern("https://pypi.org/simple") is not None
    assert valid_pattern("pypi.org:99999") is not None
    assert valid_pattern("a*b.org") is not None
    assert valid_pattern("*.pypi.org:443") is None
    assert valid_pattern("*") is not None
    assert valid_pattern("pypi.org\n") is None  # stripped
    assert valid_pattern("py pi.org") is not None


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("PyPI.org.", "pypi.org"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("_acme.example.org", "_acme.example.org"),
        ("127.1", "127.0.0.1"),
        ("[::ffff:10.0.0.1]", "10.0.0.1"),
        ("*", None),
        ("*.com", None),
        ("a b.org", None),
        ("evil.org\r\nX-Injected: 1", None),
        ("a\x1b[2Jb.org", None),
        ("host(1).org", None),
        ("a..b", None),
        ("999.1.1.1", None),
        ("fe80::1%eth0", None),
        ("x" * 64 + ".org", None),
    ],
)
def test_only_host_names_and_addresses_are_destinations(given: str, expected: str | None) -> None:
    assert host_name(given) == expected


async def test_a_name_that_is_no_host_is_refused_before_any_question(served: Served) -> None:
    name = b"*.example.org"
    socks = b"\x05\x01\x00\x05\x01\x00\x03" + bytes([len(name)]) + name + b"\x01\xbb"
    assert (await served.exchange(socks))[:4] == b"\x05\x00\x05\x08"
    connect = await served.exchange(b"CONNECT a\x1bb.org:443 HTTP/1.1\r\n\r\n")
    assert connect.startswith(b"HTTP/1.1 400 "), connect
    plain = await served.exchange(b"GET http://*.org/ HTTP/1.1\r\nHost: x\r\n\r\n")
    assert plain.startswith(b"HTTP/1.1 400 ") and b"not a host name" in plain, plain
    assert served.asked == []


def test_decision_order() -> None:
    rules = RuleSet.from_strings(
        ["Network(domain:*.example.org)"],
        ["Network(domain:ask.example.org)"],
        ["Network(domain:bad.example.org)"],
    )
    allowed = ["pypi.org", "bad.example.org"]

    def verdict(host: str, mode: Mode = "default") -> Verdict | None:
        return settled(host, 443, rules, allowed, ["evil.org"], mode)

    assert verdict("evil.org", "bypassPermissions") == Verdict(
        False, "denied by sandbox.network.deniedDomains evil.org"
    )
    assert verdict("bad.example.org") == Verdict(
        False, "denied by the rule Network(domain:bad.example.org)"
    )
    assert verdict("ask.example.org", "bypassPermissions") is None  # an ask rule asks
    assert verdict("docs.example.org") == Verdict(
        True, "allowed by the rule Network(domain:*.example.org)"
    )
    assert verdict("pypi.org") == Verdict(True, "allowed by sandbox.network.allowedDomains")
    assert verdict("other.org") is None
    assert verdict("other.org", "bypassPermissions") == Verdict(True, "bypassPermissions mode")
    assert verdict("other.org", "dontAsk") == Verdict(False, "dontAsk mode: nobody is asked")


class Served:
    def __init__(self, proxy: FilteringProxy, path: str, asked: list[tuple[str, int]]) -> None:
        self.proxy = proxy
        self.path = path
        self.asked = asked

    async def exchange(self, data: bytes) -> bytes:
        reader, writer = await asyncio.open_unix_connection(self.path)
        writer.write(data)
        got = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        return got


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    asked: list[tuple[str, int]] = []

    async def decide(host: str, port: int) -> Verdict:
        asked.append((host, port))
        await asyncio.sleep(0.05)  # a question takes time: others wait for it
        return Verdict(host == "registry.test", "user denied")

    proxy = FilteringProxy(decide, Upstream(resolve={"registry.test": "127.0.0.1"}))
    path = str(tmp_path / "p.sock")
    await proxy.serve(listening_socket(path))
    yield Served(proxy, path, asked)
    proxy.close()


async def test_one_question_per_destination_and_refusals_in_each_protocol(
    served: Served,
) -> None:
    with FakeRegistry() as registry:
        port = registry.port
        host = f"registry.test:{port}"
        get = f"GET http://{host}/hello HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        answers = await asyncio.gather(*(served.exchange(get) for _ in range(5)))
        assert all(a.endswith(b"hello from the registry\n") for a in answers)
        refused = await served.exchange(b"CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 403") and b"elsewhere.test:443" in refused
        socks = b"\x05\x01\x00" + b"\x05\x01\x00\x03\x0eelsewhere.test\x01\xbb"
        assert (await served.exchange(socks))[2:4] == b"\x05\x02"  # not allowed by ruleset
        bind = b"\x05\x01\x00" + b"\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50"
        assert (await served.exchange(bind))[2:4] == b"\x05\x07"  # BIND is not offered
        origin = await served.exchange(b"GET /hello HTTP/1.1\r\nHost: registry.test\r\n\r\n")
        assert origin.startswith(b"HTTP/1.1 400")
        # A second request on the same connection would name another host: the proxy
        # closed the first one's connection after its answer, so it never goes anywhere.
        second = f"GET http://elsewhere.test:{port}/hello HTTP/1.1\r\nHost: y\r\n\r\n"
        both = await served.exchange(get + second.encode())
        assert both.count(b"HTTP/1.1 200") == 1
        assert [h for h, _ in registry.log] == [host] * 6
    assert served.asked == [("registry.test", port), ("elsewhere.test", 443)]
    assert [(b.host, b.port) for b in served.proxy.blocked] == [("elsewhere.test", 443)]


async def test_the_callers_upstream_proxy_carries_plain_requests(tmp_path: Path) -> None:
    async def allow(host: str, port: int) -> Verdict:
        return Verdict(True, "")

    with FakeRegistry() as registry, FakeProxy() as upstream:
        env = {"http_proxy": upstream.url, "no_proxy": "localhost"}
        proxy = FilteringProxy(allow, Upstream.from_env(env))
        path = str(tmp_path / "p.sock")
        await proxy.serve(listening_socket(path))
        try:
            url = f"http://127.0.0.1:{registry.port}/hello"
            reader, writer = await asyncio.open_unix_connection(path)
            writer.write(f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            got = await asyncio.wait_for(reader.read(), 10)
            writer.close()
        finally:
            proxy.close()
    assert got.endswith(b"hello from the registry\n"), got
    assert upstream.requests == [f"GET {url}"]


async def test_a_question_about_this_machine_says_so(tmp_path: Path) -> None:
    asked: list[PermissionRequest] = []

    async def answer(request: PermissionRequest) -> PermissionAnswer:
        asked.append(request)
        return "reject_once"

    questions = HostQuestions(
        editor=DiskEditor(answer),
        session_id="s",
        tool_call_id="t",
        state=SessionRunState(),
        config=ToolConfig(),
        root=tmp_path,
        rules=RuleSet(),
        remember=None,
    ).for_command("curl http://127.0.0.1:8080/")
    assert await questions("127.0.0.1", 8080) == Verdict(False, "user denied")
    assert await questions("pypi.org", 443) == Verdict(False, "user denied")
    local, remote = (str(q.content[0]) for q in asked)
    assert "127.0.0.1 is this machine" in local and "this machine" not in remote
    assert "curl http://127.0.0.1:8080/" in local


def test_a_fifo_under_a_manifests_name_is_never_read(tmp_path: Path) -> None:
    """A command can leave a FIFO where a manifest goes; reading it would block forever."""
    import os

    from tether.network.registries import suggested_hosts

    for name in ("requirements.txt", "pip.conf", ".npmrc", ".yarnrc.yml"):
        os.mkfifo(tmp_path / name)
    (tmp_path / "pyproject.toml").write_text('url = "https://mirror.test/simple"\n')
    hosts = [s.host for s in suggested_hosts(tmp_path)]
    assert hosts == ["mirror.test", "pypi.org", "files.pythonhosted.org"]


async def test_stalled_handshakes_time_out_and_open_connections_are_capped(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.network import proxy as proxy_module
    from tether.sandbox.outbound import explain

    monkeypatch.setattr(proxy_module, "HEAD_TIMEOUT_S", 0.3)
    reader, writer = await asyncio.open_unix_connection(served.path)
    writer.write(b"\x05\x01\x00\x05")  # methods, then nothing more of the request
    assert await asyncio.wait_for(reader.read(), 5) == b"\x05\x00"  # closed by the timeout
    writer.close()

    monkeypatch.setattr(proxy_module, "HEAD_TIMEOUT_S", 30.0)
    held: list[asyncio.StreamWriter] = []
    for _ in range(proxy_module.MAX_CONNECTIONS):
        r, w = await asyncio.open_unix_connection(served.path)
        w.write(b"\x05\x01\x00")
        assert await asyncio.wait_for(r.readexactly(2), 5) == b"\x05\x00"  # being served
        held.append(w)
    late, late_w = await asyncio.open_unix_connection(served.path)
    assert await asyncio.wait_for(late.read(), 5) == b""
    late_w.close()
    for w in held:
        w.close()
    notes = explain(served.proxy.blocked)
    assert "refused 1 connections beyond 64 open at once" in notes[0], notes


async def test_the_callers_proxy_credentials_go_on_requests_and_tunnels(tmp_path: Path) -> None:
    async def allow(host: str, port: int) -> Verdict:
        return Verdict(True, "")

    with FakeRegistry() as registry, FakeProxy(credentials="corp user:p@ss") as upstream:
        assert "corp%20user:p%40ss@" in upstream.url
        env = {"http_proxy": upstream.url, "no_proxy": "localhost"}
        proxy = FilteringProxy(allow, Upstream.from_env(env))
        path = str(tmp_path / "p.sock")
        await proxy.serve(listening_socket(path))
        where = f"127.0.0.1:{registry.port}"
        try:
            reader, writer = await asyncio.open_unix_connection(path)
            writer.write(f"GET http://{where}/hello HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            plain = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            reader, writer = await asyncio.open_unix_connection(path)
            writer.write(f"CONNECT {where} HTTP/1.1\r\n\r\n".encode())
            assert (await asyncio.wait_for(reader_head(reader), 10)).startswith(b"HTTP/1.1 200")
            writer.write(
                f"GET /hello HTTP/1.1\r\nHost: {where}\r\nConnection: close\r\n\r\n".encode()
            )
            tunnelled = await asyncio.wait_for(reader.read(), 10)
            writer.close()
        finally:
            proxy.close()
    assert upstream.errors == []
    assert plain.endswith(b"hello from the registry\n"), plain
    assert tunnelled.endswith(b"hello from the registry\n"), tunnelled
    assert upstream.requests == [f"GET http://{where}/hello", f"CONNECT {where}"]


async def test_a_commands_questions_come_one_at_a_time_and_can_reject_the_rest(
    tmp_path: Path,
) -> None:
    open_now: list[str] = []
    most = 0
    asked: list[PermissionRequest] = []

    async def answer(request: PermissionRequest) -> PermissionAnswer:
        nonlocal most
        asked.append(request)
        open_now.append(request.title)
        most = max(most, len(open_now))
        await asyncio.sleep(0)  # another question would open now if nothing queued it
        open_now.remove(request.title)
        return "reject_once" if len(asked) == 1 else "cancelled"

    class RejectsTheRest(DiskEditor):
        async def ask_permission(self, request: PermissionRequest) -> PermissionReply:
            reply = await super().ask_permission(request)
            return request.reply("reject_command") if len(asked) == 2 else reply

    questions = HostQuestions(
        editor=RejectsTheRest(answer),
        session_id="s",
        tool_call_id="t",
        state=SessionRunState(),
        config=ToolConfig(),
        root=tmp_path,
        rules=RuleSet(),
        remember=None,
    ).for_command("for h in $(seq 40); do curl h$h.test & done")
    verdicts = await asyncio.gather(*(questions(f"h{i}.test", 443) for i in range(40)))
    assert most == 1 and len(asked) == 2
    assert verdicts[0] == Verdict(False, "user denied")
    assert verdicts[1] == Verdict(False, "user denied")
    assert {v.why for v in verdicts[2:]} == {"user rejected every other host of this command"}
    assert asked[0].title == "Connect to h0.test:443"
    assert asked[0].options()[-1].option_id == "reject_command"
