"""Network by host: a sandboxed command reaches an allowed host through the daemon's
filtering proxy (curl over plain HTTP, CONNECT and SOCKS; pip; npm), an undecided one is a
question, a refused one is reported to the model and never reached (the registry's log),
and traffic that ignores the proxy fails at once, naming the sandbox."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.permissions.network import HostQuestions
from tether.permissions.rules import Rule
from tether.testing.fake_registry import FakeRegistry

from .conftest import Harness, MakeHarness, needs_bwrap, text_of
from .test_prepared_sandbox import WHERE, sandbox_of, settled

pytestmark = needs_bwrap


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRegistry]:
    with FakeRegistry() as reg:
        pins = "registry.test=127.0.0.1,elsewhere.test=127.0.0.1"
        monkeypatch.setenv("TETHER_PROXY_RESOLVE", pins)
        yield reg


def _network(h: Harness, *, allowed: tuple[str, ...] = ()) -> None:
    cfg = h.ctx.config
    cfg.network_allowed = list(allowed)
    h.ctx.network = HostQuestions(
        editor=h.ctx.editor,
        session_id="sec",
        tool_call_id="toolu_sec",
        state=h.ctx.state,
        config=cfg,
        root=h.ctx.cwd,
        rules=h.rules,
        remember=lambda kind, rule: h.remembered.append((kind, rule)),
    )


async def test_an_allowed_host_serves_curl_pip_and_npm(
    make_harness: MakeHarness, registry: FakeRegistry, tmp_path: Path
) -> None:
    h = make_harness(allow=("Bash",), answer="reject_once")
    _network(h, allowed=("registry.test",))
    url = f"http://registry.test:{registry.port}"
    socks = 'curl -sS --socks5-hostname "${ALL_PROXY#socks5h://}"'
    out = await h.call(
        "Bash",
        command=f"curl -sS {url}/hello && curl -sS -p {url}/hello && {socks} {url}/hello",
    )
    assert text_of(out).count("hello from the registry") == 3, text_of(out)

    pip = (
        f"{sys.executable} -m pip download tinypkg --no-deps --no-cache-dir -d dl "
        f"--disable-pip-version-check --index-url {url}/simple/ --trusted-host registry.test"
    )
    out = await h.call("Bash", command=pip)
    assert (h.ctx.cwd / "dl" / "tinypkg-1.0-py3-none-any.whl").is_file(), text_of(out)

    npm = shutil.which("npm")
    assert npm is not None, "npm is needed for this test"
    out = await h.call(
        "Bash", command=f"npm_config_cache=/tmp/npm {npm} view tinypkg version --registry {url}/"
    )
    assert "1.0.0" in text_of(out), text_of(out)
    assert h.answers.asked == []
    assert set(registry.hosts()) == {f"registry.test:{registry.port}"}

    # the other commands' proxies sit beside this one's: their names cannot be listed
    out = await h.call("Bash", command="ls /tmp/.tether-network; echo rc=$?")
    assert "Permission denied" in text_of(out) and "rc=2" in text_of(out), text_of(out)


async def test_a_refused_host_is_reported_and_never_reached(
    make_harness: MakeHarness, registry: FakeRegistry
) -> None:
    h = make_harness(allow=("Bash",), answer="reject_once")
    _network(h)
    (h.ctx.cwd / "requirements.txt").write_text("--index-url https://mirror.example/simple\nsix\n")
    port = registry.port
    out = await h.call(
        "Bash",
        command=f"curl -sS http://elsewhere.test:{port}/hello; curl -sS -p "
        f"http://elsewhere.test:{port}/hello; echo done",
    )
    text = text_of(out)
    assert f"deny network-outbound elsewhere.test:{port} (user denied)" in text, text
    assert text.count("deny network-outbound") == 1  # asked and reported once per command
    assert len(h.answers.asked) == 1
    assert h.answers.asked[0].always_rule == "Network(domain:elsewhere.test)"
    shown = h.answers.asked[0].content[0]
    assert "mirror.example (requirements.txt), pypi.org (requirements.txt)" in str(shown)
    assert any("deny network-outbound" in getattr(c, "text", "") for c in out.display)
    assert registry.log == []


async def test_always_saves_the_rule_and_the_next_command_is_not_asked(
    make_harness: MakeHarness, registry: FakeRegistry
) -> None:
    h = make_harness(allow=("Bash",), answer="allow_always", linger_s=30)
    _network(h)
    url = f"http://registry.test:{registry.port}/hello"
    try:
        out = await h.call("Bash", command=f"curl -sS {url}")
        assert "hello from the registry" in text_of(out)
        assert h.remembered == [("allow", "Network(domain:registry.test)")]
        h.rules.allow.append(Rule.parse("Network(domain:registry.test)"))
        await settled(1)
        # The next command runs in the sandbox prepared meanwhile: its proxy is its own.
        out = await h.call("Bash", command=f"{WHERE}; curl -sS {url}")
        assert text_of(out).split()[0] == "PREPARED"
        assert "hello from the registry" in text_of(out)
        assert len(h.answers.asked) == 1
    finally:
        sandbox_of(h).close()


async def test_dont_ask_mode_refuses_undecided_hosts_without_asking(
    make_harness: MakeHarness, registry: FakeRegistry
) -> None:
    h = make_harness(mode="dontAsk", allow=("Bash",))
    _network(h)
    out = await h.call("Bash", command=f"curl -sS http://registry.test:{registry.port}/hello")
    assert "dontAsk mode" in text_of(out)
    assert h.answers.asked == [] and registry.log == []


async def test_a_raw_connection_fails_at_once_naming_the_sandbox(
    make_harness: MakeHarness,
) -> None:
    h = make_harness(allow=("Bash",))
    _network(h)
    script = (
        "import socket, time\n"
        "for target in [('pypi.org', 443), ('151.101.0.223', 443)]:\n"
        "    t = time.monotonic()\n"
        "    try:\n"
        "        socket.create_connection(target, timeout=30)\n"
        "    except OSError as e:\n"
        "        print('failed after %.3f s: %s' % (time.monotonic() - t, e))\n"
        "raise SystemExit(1)\n"
    )
    (h.ctx.cwd / "raw.py").write_text(script)
    out = await h.call("Bash", command=f"{sys.executable} raw.py")
    text = text_of(out)
    assert "ran in the shell sandbox" in text and "no direct network" in text, text
    times = [float(line.split()[2]) for line in text.splitlines() if "failed after" in line]
    assert len(times) == 2 and max(times) < 1.0, text
    assert h.answers.asked == []
