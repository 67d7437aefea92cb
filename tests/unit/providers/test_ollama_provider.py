"""OllamaProvider (Ollama's native /api/chat) against the fake Ollama: every request says
the window Tether uses (``options.num_ctx``) and asks to be refused rather than cut."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from providers_support import collect, make_request

from tether.core.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)
from tether.errors import ModelError, PromptTooLongError
from tether.providers.base import (
    Completed,
    StreamReset,
    TextDelta,
    ThinkingDelta,
    TokenUsage,
    ToolUseReady,
    ToolUseStarted,
)
from tether.providers.models import ModelOptions
from tether.providers.ollama import OllamaError, OllamaProvider, _status_failure  # pyright: ignore[reportPrivateUsage]
from tether.testing.fake_ollama import FakeOllamaServer

FAST = {"base_delay_s": 0.01, "max_delay_s": 0.05}
READ = {"type": "tool_use", "name": "Read", "input": {"file_path": "src/module.py"}}
OK = [{"type": "text", "text": "ok"}]


@pytest.fixture
def ollama() -> Iterator[Callable[..., FakeOllamaServer]]:
    servers: list[FakeOllamaServer] = []

    def start(script: Any, **kwargs: Any) -> FakeOllamaServer:
        kwargs.setdefault("served_model", "qwen")
        server = FakeOllamaServer(script, **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
async def provider() -> AsyncIterator[Callable[..., OllamaProvider]]:
    made: list[OllamaProvider] = []

    def make(server: FakeOllamaServer, model: str = "qwen", **options: Any) -> OllamaProvider:
        made.append(OllamaProvider(model, base_url=server.base_url, **FAST, **options))
        return made[-1]

    yield make
    for p in made:
        await p.aclose()


def request(messages: list[Message] | None = None, model: str = "qwen") -> Any:
    return make_request(messages, model=model)


async def test_streams_text_thinking_and_tool_calls(ollama, provider):
    blocks = [{"type": "thinking", "thinking": "Look first."}, {"type": "text", "text": "On it."}]
    usage = {"input_tokens": 120, "output_tokens": 9}
    server = ollama([{"blocks": [*blocks, READ], "usage": usage}], context_window=16_384)
    events = await collect(provider(server).stream(request()))

    read = ToolUseBlock(id="toolu_0000_02", name="Read", input=READ["input"])
    assert events == [
        ThinkingDelta("Look"),
        ThinkingDelta(" fir"),
        ThinkingDelta("st."),
        TextDelta("On"),
        TextDelta(" i"),
        TextDelta("t."),
        ToolUseStarted(read.id, "Read"),
        ToolUseReady(read),
        Completed(
            Message(
                role="assistant",
                content=[ThinkingBlock(thinking="Look first."), TextBlock(text="On it."), read],
            ),
            "tool_use",
            TokenUsage(input_tokens=120, output_tokens=9),
        ),
    ]
    body = server.requests[0]
    assert body["options"]["num_ctx"] == 16_384  # the window Ollama loads by itself
    assert body["truncate"] is False and body["shift"] is False and body["stream"] is True
    assert body["tools"][0]["function"]["name"] == "Read"
    assert server.request_headers[-1]["content-type"] == "application/json"
    server.assert_complete()


@pytest.mark.parametrize(
    ("setting", "modelfile", "trained", "expected"),
    [
        (None, False, 131_072, 8_192),  # what Ollama loads by itself (/api/ps)
        (None, True, 131_072, 8_192),  # the Modelfile's num_ctx
        (65_536, False, 131_072, 65_536),  # the setting: Ollama loads that much
        (262_144, False, 32_768, 32_768),  # never more than the trained length
    ],
)
async def test_every_request_carries_the_window_tether_uses(
    ollama, provider, setting, modelfile, trained, expected
):
    server = ollama([OK, OK], context_window=8_192, trained_context=trained)
    server.modelfile_num_ctx = modelfile
    ollama_provider = provider(server, options=ModelOptions(context_window=setting))
    await collect(ollama_provider.stream(request()))
    await collect(ollama_provider.stream(request([user_text("again")])))
    assert ollama_provider.context_window == expected
    assert ollama_provider.limits.window == expected
    assert server.num_ctx == [expected, expected]
    server.assert_complete()


async def test_a_cloud_model_runs_at_its_trained_length(ollama, provider):
    """Ollama never lists a cloud model in /api/ps (it runs elsewhere, at its whole length):
    not Ollama's local default."""
    server = ollama([OK], context_window=4_096, trained_context=65_536, remote=True)
    cloud = provider(server)
    await collect(cloud.stream(request()))
    assert cloud.context_window == 65_536 and server.num_ctx == [65_536]
    server.assert_complete()


async def test_tool_calls_round_trip_with_ids_names_and_object_arguments(ollama, provider):
    server = ollama([[READ], OK])
    ollama_provider = provider(server)
    first = await collect(ollama_provider.stream(request()))
    done = first[-1]
    assert isinstance(done, Completed)
    (use,) = done.message.tool_uses
    result = ToolResultBlock(tool_use_id=use.id, content=[TextBlock(text="print(1)")])
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        user_text("read it"),
        done.message,
        Message(role="user", content=[result, TextBlock(text="and this"), image]),
    ]
    await collect(ollama_provider.stream(request(history)))
    messages = server.requests[1]["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": use.id, "function": {"name": "Read", "arguments": READ["input"]}}],
    }
    assert messages[3] == {
        "role": "tool",
        "content": "print(1)",
        "tool_call_id": use.id,
        "tool_name": "Read",
    }
    assert messages[4] == {"role": "user", "content": "and this", "images": [image.data]}
    server.assert_complete()


async def test_a_model_ollama_does_not_have_says_to_pull_it(ollama, provider):
    server = ollama([], served_model="qwen2.5-coder:14b")
    with pytest.raises(ModelError) as caught:
        await collect(provider(server).stream(request(model="qwen2.5-coder:7b")))
    said = str(caught.value)
    assert "404" in said and "model 'qwen2.5-coder:7b' not found" in said
    assert "ollama pull qwen2.5-coder:7b" in said
    assert server.remaining == 0 and server.errors == []


async def test_a_prompt_over_num_ctx_is_refused_with_the_window_not_cut(ollama, provider):
    server = ollama([OK], context_window=4_096)
    ollama_provider = provider(server, options=ModelOptions(context_window=600))
    big = user_text("word " * 3_000)
    with pytest.raises(PromptTooLongError) as caught:
        await collect(ollama_provider.stream(request([big])))
    assert caught.value.limit == 600 and caught.value.tokens is not None
    assert caught.value.tokens > 600
    assert server.truncated == [] and server.num_ctx == [600]
    assert server.remaining == 1


async def test_ollama_without_truncate_false_cuts_silently_and_the_fake_says_so(ollama):
    """What Tether avoids: the same prompt without ``truncate: false`` is answered, its
    oldest messages dropped, and the fake reports the cut as a problem."""
    import httpx2

    server = ollama([OK], context_window=200)
    messages = [
        {"role": "user", "content": "old " * 400},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "new"},
    ]
    body = {"model": "qwen", "messages": messages, "stream": False, "options": {"num_ctx": 200}}
    answer = httpx2.post(f"{server.base_url}/api/chat", json=body).json()
    assert answer["done"] is True and answer["prompt_eval_count"] < 200
    assert len(server.truncated) == 1
    assert any("cut silently" in p for p in server.problems())


@pytest.mark.parametrize("fault", ["cut_mid_text", "overloaded_mid_stream"])
async def test_a_stream_that_breaks_falls_back_to_one_whole_answer(ollama, provider, fault):
    text = {"type": "text", "text": "a long enough answer"}
    server = ollama([{"blocks": [text], "fault": fault}, {"blocks": [text]}])
    events = await collect(provider(server).stream(request()))
    assert any(isinstance(e, StreamReset) for e in events)
    done = events[-1]
    assert isinstance(done, Completed)
    assert done.message.content == [TextBlock(text="a long enough answer")]
    assert server.requests[1]["stream"] is False
    assert server.requests[1]["options"]["num_ctx"] == server.context_window
    server.assert_complete()


async def test_thinking_off_sends_think_false(ollama, provider):
    server = ollama([OK])
    await collect(provider(server, options=ModelOptions(thinking="off")).stream(request()))
    assert server.requests[0]["think"] is False
    server.assert_complete()


async def test_a_model_without_tools_names_the_cause(ollama, provider):
    server = ollama([OK], capabilities=("completion",))
    with pytest.raises(ModelError) as caught:
        await collect(provider(server).stream(request()))
    assert "does not support tools" in str(caught.value)
    assert "model that can call tools" in str(caught.value)


async def test_ollama_not_running_says_how_to_start_it(provider):
    server = FakeOllamaServer([])
    server.start()
    gone = OllamaProvider("qwen", base_url=server.base_url, max_retries=0)
    server.stop()  # nothing listens on the port any more
    with pytest.raises(ModelError) as caught:
        await collect(gone.stream(request()))
    await gone.aclose()
    assert "ollama serve" in str(caught.value)


async def test_a_page_where_the_stream_should_be_names_the_url_and_is_not_retried(provider):
    """A captive portal or a proxy's login page answering 200 with HTML."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    hits: list[str] = []

    class Portal(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hits.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            page = b"<html><title>Sign in</title></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Portal)
    Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        root = f"http://127.0.0.1:{httpd.server_address[1]}"
        portal = OllamaProvider("qwen", base_url=root, options=ModelOptions(context_window=8192))
        with pytest.raises(ModelError) as caught:
            await collect(portal.stream(request()))
        await portal.aclose()
    finally:
        httpd.shutdown()
        httpd.server_close()
    said = str(caught.value)
    assert f"{root}/api/chat answered HTTP 200 with text/html" in said
    assert "not application/x-ndjson" in said
    assert hits.count("/api/chat") == 1  # the same request gets the same page: no retry


@pytest.mark.parametrize(
    ("spec", "env", "model", "url"),
    [
        ("ollama:qwen2.5-coder:14b", {}, "qwen2.5-coder:14b", "http://127.0.0.1:11434"),
        ("ollama:qwen", {"OLLAMA_HOST": "0.0.0.0:9000"}, "qwen", "http://127.0.0.1:9000"),
        ("ollama:qwen", {"OLLAMA_HOST": "gpu-box"}, "qwen", "http://gpu-box:11434"),
        (
            "ollama:qwen",
            {"OLLAMA_HOST": "https://ollama.example"},
            "qwen",
            "https://ollama.example:443",
        ),
        ("ollama:qwen:7b@gpu-box:8080", {"OLLAMA_HOST": "x"}, "qwen:7b", "http://gpu-box:8080"),
        ("ollama:library/qwen:7b@http://h:11434/v1/", {}, "library/qwen:7b", "http://h:11434"),
    ],
)
def test_ollama_specs(spec: str, env: dict[str, str], model: str, url: str) -> None:
    from tether.providers.choice import choose_model
    from tether.providers.registry import parse_model_spec

    parsed = parse_model_spec(spec, env=env)
    assert (parsed.provider, parsed.model, parsed.base_url) == ("ollama", model, url)
    assert parse_model_spec(str(parsed), env={}) == parsed  # as a transcript keeps it
    choice = choose_model(spec, "--model", env=env)
    by = "--model" if "@" in spec else "OLLAMA_HOST" if env else None
    assert (choice.endpoint, choice.endpoint_chosen_by) == (url, by)


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("ollama:", "ollama: needs a model name"),
        ("ollama:@http://h:11434", "ollama: needs a model name"),
        ("ollama:qwen@ftp://h", "is not an http:// or https:// URL"),
    ],
)
def test_bad_ollama_specs_say_what_to_write(spec: str, said: str) -> None:
    from tether.errors import ConfigError
    from tether.providers.registry import parse_model_spec

    with pytest.raises(ConfigError) as caught:
        parse_model_spec(spec, env={})
    assert said in str(caught.value)


@pytest.mark.parametrize("status", [400, 500])
def test_the_runners_own_refusal_is_an_overflow_at_400_or_500(status: int) -> None:
    refusal = OllamaError(status, "the input length exceeds the context length")
    failure = _status_failure(refusal, "Ollama at http://x", "qwen")
    assert isinstance(failure.error, PromptTooLongError) and not failure.retryable
    other = _status_failure(OllamaError(500, "context length unknown: runner crashed"), "x", "q")
    assert not isinstance(other.error, PromptTooLongError)
