"""How requests reach the Messages API: our own HTTP client when the caller has a key or a
token (the SDK is not even imported), the SDK's client when only it can find credentials.
Both against the strict fake over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from providers_support import collect, env_with_tether, make_request

from tether.errors import ModelError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.anthropic_transport import (
    API_VERSION,
    ApiStatusError,
    EventReader,
    SdkTransport,
)
from tether.providers.base import Completed
from tether.testing.fake_anthropic import FakeAnthropicServer

BODY = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 100,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}


def test_the_api_version_header_is_the_sdks() -> None:
    from anthropic._constants import ANTHROPIC_API_VERSION

    assert API_VERSION == ANTHROPIC_API_VERSION


def test_a_cold_print_run_with_a_key_never_imports_the_sdk() -> None:
    with FakeAnthropicServer([[{"type": "text", "text": "Hello."}]]) as api:
        code = textwrap.dedent(
            """
            import atexit, sys
            atexit.register(lambda: print("SDK imported:", "anthropic" in sys.modules,
                                          file=sys.stderr))
            from tether.cli.main import main
            sys.exit(main(["-p", "hi", "--model", "claude-sonnet-4-6"]))
            """
        )
        env = {
            **env_with_tether(),
            "ANTHROPIC_API_KEY": "k",
            "ANTHROPIC_BASE_URL": api.base_url,
            "TETHER_NO_DAEMON": "1",
        }
        env.pop("ANTHROPIC_AUTH_TOKEN", None)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert "Hello." in done.stdout
        assert "SDK imported: False" in done.stderr
        api.assert_complete()
        assert api.request_headers[0]["authorization"] == "Bearer k"
        assert api.request_headers[0]["anthropic-version"] == API_VERSION


async def test_custom_headers_and_a_token_from_the_callers_variables() -> None:
    with FakeAnthropicServer([[{"type": "text", "text": "ok"}]], api_keys={"tok"}) as api:
        env = {
            "ANTHROPIC_AUTH_TOKEN": "tok",
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_CUSTOM_HEADERS": "X-Team: blue\nX-Empty-Line-Is-Skipped\nX-Trace: a:b",
        }
        provider = AnthropicProvider("claude-sonnet-4-6", caller_env=env, max_retries=0)
        try:
            events = await collect(provider.stream(make_request()))
        finally:
            await provider.aclose()
        assert isinstance(events[-1], Completed)
        headers = api.request_headers[0]
        assert headers["x-team"] == "blue" and headers["x-trace"] == "a:b"
        assert headers["authorization"] == "Bearer tok"


@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
async def test_a_refused_key_is_the_apis_own_error(variable: str) -> None:
    """The API's words, and which variable's key was refused where (the fix is there)."""
    with FakeAnthropicServer([[{"type": "text", "text": "never"}]], api_keys={"good"}) as api:
        env = {variable: "bad", "ANTHROPIC_BASE_URL": api.base_url}
        provider = AnthropicProvider("claude-sonnet-4-6", caller_env=env, max_retries=0)
        try:
            with pytest.raises(ModelError) as caught:
                await collect(provider.stream(make_request()))
        finally:
            await provider.aclose()
        assert caught.value.status == 401
        assert "invalid x-api-key" in str(caught.value)
        assert f"the key from {variable} was refused by {api.base_url}" in str(caught.value)


async def test_without_a_key_or_token_the_sdk_looks_and_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no profile on disk either
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    with FakeAnthropicServer([[{"type": "text", "text": "never"}]]) as api:
        for profile, expected in (
            (None, "no Anthropic credentials"),
            # A profile named but missing: the SDK's own words, which say what to set.
            ("work", "Config file not found.*ANTHROPIC_PROFILE"),
        ):
            if profile:
                monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic"))
                monkeypatch.setenv("ANTHROPIC_PROFILE", profile)
            provider = AnthropicProvider("claude-sonnet-4-6", base_url=api.base_url, max_retries=0)
            try:
                with pytest.raises(ModelError, match=expected):
                    await collect(provider.stream(make_request()))
            finally:
                await provider.aclose()
        assert api.requests == []


async def test_a_caller_without_credentials_never_gets_this_processs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "the-daemons-own-key")
    with FakeAnthropicServer([[{"type": "text", "text": "never"}]]) as api:
        caller = {"ANTHROPIC_BASE_URL": api.base_url}
        provider = AnthropicProvider("claude-sonnet-4-6", caller_env=caller, max_retries=0)
        try:
            with pytest.raises(ModelError, match="no Anthropic credentials"):
                await collect(provider.stream(make_request()))
        finally:
            await provider.aclose()
        assert api.requests == []


async def test_the_sdk_transport_streams_and_answers_whole() -> None:
    import anthropic

    script = [
        [{"type": "text", "text": "streamed"}],
        [{"type": "text", "text": "whole"}],
        {"blocks": [{"type": "text", "text": "cut"}], "fault": "overloaded_mid_stream"},
    ]
    with FakeAnthropicServer(script) as api:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=api.base_url, max_retries=0)
        transport = SdkTransport(client)
        try:
            reader = await transport.open(json.dumps(BODY).encode(), {})
            types = [event.type async for event in reader]
            assert types[0] == "message_start" and types[-1] == "message_stop"
            whole = {**BODY, "stream": False}
            message = await transport.create(json.dumps(whole).encode(), {}, 30)
            assert [b.text for b in message.content] == ["whole"]
            reader = await transport.open(json.dumps(BODY).encode(), {})
            with pytest.raises(ApiStatusError) as caught:
                async for _ in reader:
                    pass
            assert caught.value.status == 200 and caught.value.type == "overloaded_error"
        finally:
            await transport.close()


class _Lines:
    """A response whose body arrives as these SSE lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.closed = False

    async def aiter_lines(self) -> Any:
        for line in self.lines:
            yield line

    async def aclose(self) -> None:
        self.closed = True


async def test_server_sent_events_are_read_by_the_rules() -> None:
    start = '{"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}}'
    lines = [
        ": a comment",
        "event: ping",
        'data: {"type": "ping"}',
        "",
        "event: message_start",
        f"data: {start[:26]}",
        f"data: {start[26:]}",  # data lines join with a newline: still one JSON value
        "",
        "event: something_new",
        'data: {"type": "something_new"}',
        "",
        "event: message_stop",
        'data: {"type": "message_stop"}',
    ]
    response = _Lines(lines)
    reader = EventReader(response)  # type: ignore[arg-type]
    events = [event async for event in reader]
    assert [e.type for e in events] == ["message_start", "message_stop"]
    assert events[0].message is not None and events[0].message.usage.input_tokens == 3
    await reader.close()
    assert response.closed


async def test_an_error_event_mid_stream_is_the_apis_error() -> None:
    lines = [
        "event: error",
        'data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
        "",
    ]
    with pytest.raises(ApiStatusError) as caught:
        async for _ in EventReader(_Lines(lines)):  # type: ignore[arg-type]
            pass
    assert (caught.value.status, caught.value.type) == (200, "overloaded_error")


async def test_a_proxy_that_answers_html_is_named_in_the_error() -> None:
    class Gateway(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            page = b"<html>Bad Gateway</html>"
            self.send_response(502)
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    provider = AnthropicProvider("claude-sonnet-4-6", caller_env={"ANTHROPIC_API_KEY": "k"},
                                 base_url=url, max_retries=0)  # fmt: skip
    try:
        with pytest.raises(ModelError) as caught:
            await collect(provider.stream(make_request()))
    finally:
        await provider.aclose()
        server.shutdown()
    assert caught.value.status == 502 and "Bad Gateway" in str(caught.value)
