"""The fake API servers themselves: scripts are enforced, requests recorded, process mode."""

from __future__ import annotations

import asyncio
import json
import selectors
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from providers_support import collect, env_with_tether, make_request

from tether.core.messages import Message, ToolUseBlock, tool_result, user_text
from tether.errors import ModelError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Completed
from tether.testing.fake_anthropic import FakeAnthropicServer

OK = [{"type": "text", "text": "ok"}]


async def test_expect_matches_the_last_user_message(anthropic_server, anthropic_provider):
    server = anthropic_server([{"blocks": OK, "expect": {"contains": "exit code 0"}}])
    history = [
        user_text("run the tests"),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="toolu_1", name="Bash", input={"command": "pytest"})],
        ),
        Message(role="user", content=[tool_result("toolu_1", "exit code 0")]),
    ]
    await collect(anthropic_provider(server).stream(make_request(history)))
    assert server.errors == []
    server.assert_complete()


async def test_expect_fails_loudly(openai_server, openai_provider):
    server = openai_server([{"blocks": OK, "expect": {"contains": "needle"}}])
    with pytest.raises(ModelError, match="needle"):
        await collect(openai_provider(server).stream(make_request()))
    assert server.errors == ["turn 1: expected the last user message to contain 'needle'"]
    with pytest.raises(AssertionError, match="needle"):
        server.assert_complete()


async def test_a_request_after_the_last_turn_is_an_error(anthropic_server, anthropic_provider):
    server = anthropic_server([OK])
    provider = anthropic_provider(server)
    await collect(provider.stream(make_request()))
    with pytest.raises(ModelError, match=r"unexpected request #2: the script has 1 turn\(s\)"):
        await collect(provider.stream(make_request()))
    assert len(server.requests) == 2  # reported, not retried
    with pytest.raises(AssertionError, match="unexpected request #2"):
        server.assert_complete()


def test_assert_complete_reports_unconsumed_turns():
    with FakeAnthropicServer([OK, OK]) as server:
        assert server.remaining == 2
        with pytest.raises(AssertionError, match="2 scripted turn"):
            server.assert_complete()


async def test_records_requests_and_timing(anthropic_server, anthropic_provider):
    server = anthropic_server([{"blocks": OK, "chunk_delay_ms": 5}])
    await collect(anthropic_provider(server).stream(make_request()))
    for _ in range(100):  # the server thread notes the end just after the last byte
        if server.response_end_times:
            break
        await asyncio.sleep(0.01)
    assert len(server.requests) == len(server.request_times) == len(server.response_end_times) == 1
    # message_start, ping, block start, 2 deltas, block stop, message_delta, message_stop
    assert server.response_end_times[0] - server.request_times[0] >= 8 * 0.005
    assert server.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_non_streaming_requests_get_the_full_message(anthropic_server):
    import anthropic

    server = anthropic_server([[{"type": "thinking", "thinking": "t"}, *OK]])
    client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
    try:
        message = await client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            thinking={"type": "adaptive"},
        )
    finally:
        await client.close()
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.stop_reason == "end_turn"
    # The documented rule: ceil(utf8 bytes of {"messages","system","tools"} JSON / 4).
    assert message.usage.input_tokens == server.input_tokens[-1] == 18


def _spawn(module: str, script: list[object], tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", module, "--script", str(path), "--port-file", str(port_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_with_tether(),
    )
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:  # a bounded wait for the READY line
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=15):
            proc.kill()
            pytest.fail("the fake server printed no READY line")
    line = proc.stdout.readline().strip()
    assert line.startswith("READY http://127.0.0.1:"), line
    base_url = line.removeprefix("READY ")
    assert f":{port_file.read_text(encoding='utf-8')}" in base_url
    return proc, base_url


async def test_process_mode_serves_one_request_and_exits_clean(tmp_path):
    proc, base_url = _spawn("tether.testing.fake_anthropic", [OK], tmp_path)
    provider = AnthropicProvider("claude-sonnet-4-6", api_key="k", base_url=base_url)
    try:
        events = await collect(provider.stream(make_request()))
    finally:
        await provider.aclose()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=10)
    assert isinstance(events[-1], Completed)
    assert events[-1].message.text == "ok"
    assert proc.returncode == 0, stderr


def test_process_mode_exits_1_when_turns_remain(tmp_path):
    proc, _ = _spawn("tether.testing.fake_openai", [OK], tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert "1 scripted turn(s) were never requested" in stderr


def test_the_fake_models_route_answers_as_the_models_api() -> None:
    """``GET /v1/models/{id}`` through the real SDK: found, unknown (404), no key (401)."""
    import anthropic

    with FakeAnthropicServer([], api_keys={"k"}) as api:
        client = anthropic.Anthropic(api_key="k", base_url=api.base_url, max_retries=0)
        assert client.models.retrieve("claude-sonnet-4-6").id == "claude-sonnet-4-6"
        with pytest.raises(anthropic.NotFoundError):
            client.models.retrieve("gpt-4o")
        wrong = anthropic.Anthropic(api_key="nope", base_url=api.base_url, max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            wrong.models.retrieve("claude-sonnet-4-6")
        assert api.requests == []  # not a Messages request: no script turn was used
