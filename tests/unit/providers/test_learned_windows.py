"""Windows learned from refusals: each server's wording is read, the provider takes the
window at once, keeps it for the next session, and forgets it when the server takes more."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tether.core.messages import user_text
from tether.errors import PromptTooLongError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Completed, ModelRequest
from tether.providers.models import ModelOptions
from tether.providers.openai_compat import FALLBACK_WINDOW, OpenAICompatProvider
from tether.providers.overflow import Overflow, is_overflow, read_overflow
from tether.providers.side import SideModel
from tether.providers.windows import WindowBook, credential_id
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer
from tether.testing.openai_rules import Flavor

WORDINGS = [
    # Anthropic
    ("prompt is too long: 22036 tokens > 20000 maximum", None, Overflow(22036, 20000)),
    # vLLM, without and with max_tokens; OpenAI
    (
        "This model's maximum context length is 8192 tokens. However, your request has 9000 "
        "input tokens. Please reduce the length of the input messages.",
        None,
        Overflow(9000, 8192),
    ),
    (
        "This model's maximum context length is 8192 tokens. However, you requested 9100 "
        "tokens (8000 in the messages, 1100 in the completion).",
        None,
        Overflow(8000, 8192, 1100),
    ),
    (
        "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum "
        "context length is 4096 tokens and your request has 3500 input tokens (1000 > 4096 - "
        "3500).",
        None,
        Overflow(3500, 4096, 1000),
    ),
    (
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130412 tokens. Please reduce the length of the messages.",
        None,
        Overflow(130412, 128000),
    ),
    # llama.cpp: the message, and the error object's fields; the old wording has no numbers
    (
        "request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it",
        {"type": "exceed_context_size_error", "n_prompt_tokens": 8889, "n_ctx": 4096},
        Overflow(8889, 4096),
    ),
    ("the request exceeds the available context size, try increasing it", None, Overflow()),
    # Ollama's native API (llama.cpp's body as a string), and with shift off
    (
        '{"error":"{\\"error\\":{\\"code\\":400,\\"message\\":\\"request (8889 tokens) exceeds'
        ' the available context size (4096 tokens), try increasing it\\",\\"type\\":\\"exceed_'
        'context_size_error\\",\\"n_prompt_tokens\\":8889,\\"n_ctx\\":4096}}"}',
        None,
        Overflow(8889, 4096),
    ),
    (
        "the prompt is longer than the context length currently available to the model; "
        "shorten the prompt",
        None,
        Overflow(),
    ),
    # Ollama's own runner with truncate off (0.12.6 on: runner/ollamarunner errorInputTooLong)
    ("the input length exceeds the context length", None, Overflow()),
    # Anthropic, where the window bounds prompt and reply together
    (
        "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease "
        "input length or `max_tokens` and try again",
        None,
        Overflow(199759, 200000, 8192),
    ),
    # vLLM's engine check
    (
        "The decoder prompt (length 17571) is longer than the maximum model length of 16000. "
        "Make sure that `max_model_len` is no smaller than the number of text tokens.",
        None,
        Overflow(17571, 16000),
    ),
    # Gemini's OpenAI-compatible endpoint
    (
        "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
        None,
        Overflow(1200293, 1048576),
    ),
    # TGI (422), both checks
    (
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: "
        "1887 `inputs` tokens and 1024 `max_new_tokens`",
        None,
        Overflow(1887, 2048, 1024),
    ),
    (
        "Input validation error: `inputs` must have less than 1024 tokens. Given: 1500",
        None,
        Overflow(1500, 1024),
    ),
    # LM Studio, older and newer builds
    (
        "Trying to keep the first 15857 tokens when context the overflows. However, the model "
        "is loaded with context length of only 4096 tokens, which is not enough.",
        None,
        Overflow(15857, 4096),
    ),
    (
        "The number of tokens to keep from the initial prompt is greater than the context "
        "length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context "
        "length, or provide a shorter input.",
        None,
        Overflow(13055, 4096),
    ),
    # SGLang; OpenRouter's "about"; OpenAI's code-only wording
    (
        "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens).",
        None,
        Overflow(160062, 59862),
    ),
    (
        "This endpoint's maximum context length is 131072 tokens. However, you requested about "
        "140333 tokens (140000 of text input, 333 of tool input). Please reduce the length.",
        None,
        Overflow(140333, 131072),
    ),
    (
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        None,
        Overflow(),
    ),
    # LiteLLM wraps the upstream's words
    (
        "litellm.ContextWindowExceededError: litellm.BadRequestError: AnthropicException - "
        "prompt is too long: 210000 tokens > 200000 maximum",
        None,
        Overflow(210000, 200000),
    ),
]


@pytest.mark.parametrize(("text", "fields", "expected"), WORDINGS)
def test_each_server_wording_is_read(
    text: str, fields: dict[str, object] | None, expected: Overflow
) -> None:
    assert is_overflow(text)
    assert read_overflow(text, fields) == expected


def test_other_refusals_are_not_overflows() -> None:
    assert not is_overflow("messages.0.content.0.text: text content blocks must be non-empty")
    assert not is_overflow("Number of requests has exceeded your rate limit")


def test_the_book_keeps_windows_per_endpoint_and_model(tmp_path: Path) -> None:
    book = WindowBook.in_dir(tmp_path)
    book.learn("http://a/", "m", 12_000)
    book.learn("http://b", "m", 20_000)
    again = WindowBook.in_dir(tmp_path)  # another session, another process
    assert again.get("http://a", "m") == 12_000
    assert again.get("http://b", "m") == 20_000
    assert again.get("http://a", "other") is None
    again.forget("http://a", "m")
    assert WindowBook.in_dir(tmp_path).get("http://a", "m") is None
    (tmp_path / "windows.json").write_text("{not json")
    assert WindowBook.in_dir(tmp_path).get("http://b", "m") is None  # unreadable: ignored


def request(text: str) -> ModelRequest:
    return ModelRequest(model="", system=[], messages=[user_text(text)], tools=[])


async def drain(provider: AnthropicProvider | OpenAICompatProvider, text: str) -> Completed:
    completed = None
    async for event in provider.stream(request(text)):
        if isinstance(event, Completed):
            completed = event
    assert completed is not None
    return completed


async def test_anthropic_provider_learns_keeps_and_forgets(tmp_path: Path) -> None:
    book = WindowBook.in_dir(tmp_path)
    ok = [{"type": "text", "text": "ok"}]
    with FakeAnthropicServer([ok, ok], context_window=3_000) as api:
        provider = AnthropicProvider(
            "claude-sonnet-4-6", base_url=api.base_url, api_key="k", windows=book
        )
        assert provider.context_window == 1_000_000
        with pytest.raises(PromptTooLongError) as refused:
            await drain(provider, "x" * 20_000)
        assert refused.value.limit == 3_000
        assert f"prompt is too long: {refused.value.tokens} tokens > 3000 maximum" == str(
            refused.value
        )
        assert provider.context_window == provider.limits.window == 3_000
        await drain(provider, "small")
        await provider.aclose()
        stored = json.loads((tmp_path / "windows.json").read_text())["windows"]
        # Kept per endpoint, model and credential (a digest: the file holds no key).
        assert stored == {f"{api.base_url} claude-sonnet-4-6 {credential_id('k')}": 3_000}
        assert "k" not in credential_id("k")
        # The next session starts with it; when the server takes more, it is forgotten.
        api.context_window = 200_000
        following = AnthropicProvider(
            "claude-sonnet-4-6", base_url=api.base_url, api_key="k", windows=book
        )
        assert following.context_window == 3_000
        await drain(following, "x" * 20_000)
        assert following.context_window == 1_000_000
        assert book.get(api.base_url, "claude-sonnet-4-6", "k") is None
        await following.aclose()


async def test_openai_provider_learns_from_vllm_refusal(tmp_path: Path) -> None:
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer([ok], context_window=2_000, announce_window=False) as server:
        provider = OpenAICompatProvider(
            "qwen", base_url=server.base_url, windows=WindowBook.in_dir(tmp_path)
        )
        with pytest.raises(PromptTooLongError) as refused:
            await drain(provider, "x" * 20_000)
        assert refused.value.limit == 2_000
        assert provider.context_window == 2_000
        await drain(provider, "small")
        await provider.aclose()


async def test_one_credentials_window_does_not_cap_another(tmp_path: Path) -> None:
    """A proxy that limits one key (a plan's window) does not cap another account's."""
    book = WindowBook.in_dir(tmp_path)
    ok = [{"type": "text", "text": "ok"}]
    with FakeAnthropicServer([ok], context_window=3_000) as api:
        base = api.base_url
        limited = AnthropicProvider(
            "claude-sonnet-4-6", base_url=base, api_key="key-a", windows=book
        )
        with pytest.raises(PromptTooLongError):
            await drain(limited, "x" * 20_000)
        await limited.aclose()
    for key, window in (("key-a", 3_000), ("key-b", 1_000_000)):
        other = AnthropicProvider("claude-sonnet-4-6", base_url=base, api_key=key, windows=book)
        assert other.context_window == window, key
        await other.aclose()
    assert list(book.entries(base, "claude-sonnet-4-6").values()) == [3_000]


async def test_an_explicit_setting_wins_over_an_earlier_sessions_window(tmp_path: Path) -> None:
    book = WindowBook.in_dir(tmp_path)
    book.learn("http://127.0.0.1:9/v1", "qwen", 12_000)
    book.learn("https://api.example", "claude-sonnet-4-6", 20_000, "k")
    plain = OpenAICompatProvider("qwen", base_url="http://127.0.0.1:9/v1", windows=book)
    assert plain.context_window == 12_000
    for provider in (
        OpenAICompatProvider(
            "qwen",
            base_url="http://127.0.0.1:9/v1",
            windows=book,
            options=ModelOptions(context_window=65_536),
        ),
        AnthropicProvider(
            "claude-sonnet-4-6",
            base_url="https://api.example",
            api_key="k",
            windows=book,
            options=ModelOptions(context_window=65_536),
        ),
    ):
        assert provider.context_window == provider.limits.window == 65_536
        await provider.aclose()
    await plain.aclose()


async def test_a_refusal_in_this_session_bounds_even_an_explicit_setting(tmp_path: Path) -> None:
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer([ok], context_window=2_000, announce_window=False) as server:
        provider = OpenAICompatProvider(
            "qwen",
            base_url=server.base_url,
            windows=WindowBook.in_dir(tmp_path),
            options=ModelOptions(context_window=65_536),
        )
        with pytest.raises(PromptTooLongError):
            await drain(provider, "x" * 20_000)
        assert provider.context_window == 2_000
        await provider.aclose()


async def test_the_servers_announcement_replaces_an_earlier_sessions_window(
    tmp_path: Path,
) -> None:
    """Learned at 12k from a refusal; the server was restarted with 64k and says so."""
    book = WindowBook.in_dir(tmp_path)
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer(
        [ok], context_window=65_536, flavor="llamacpp", served_model="qwen"
    ) as server:
        book.learn(server.base_url, "qwen", 12_000)
        provider = OpenAICompatProvider("qwen", base_url=server.base_url, windows=book)
        assert provider.context_window == 12_000
        await provider.discover_window()
        assert provider.context_window == 65_536
        assert book.get(server.base_url, "qwen") is None
        await provider.aclose()


# -- the window each OpenAI-compatible server reports ------------------------------------


@pytest.mark.parametrize("flavor", ["vllm", "litellm", "llamacpp", "ollama"])
async def test_the_window_each_server_reports_is_read(flavor: Flavor) -> None:
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer([ok], context_window=6_144, flavor=flavor, served_model="qwen") as server:
        provider = OpenAICompatProvider("qwen", base_url=server.base_url)
        await drain(provider, "hello")
        await provider.aclose()
        assert provider.context_window == 6_144
        server.assert_complete()


async def test_ollama_window_is_the_loaded_runners_not_the_trained_length() -> None:
    """No num_ctx in the Modelfile: Tether loads the model as the chat requests will and
    reads the context it runs with from /api/ps (the trained length is 131072)."""
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer([ok], context_window=4_096, flavor="ollama", served_model="qwen") as s:
        provider = OpenAICompatProvider("qwen", base_url=s.base_url)
        await provider.discover_window()
        assert provider.context_window == 4_096 and s.loaded
        await provider.aclose()
    with FakeOpenAIServer([ok], context_window=8_192, flavor="ollama", served_model="qwen") as s:
        s.modelfile_num_ctx = True  # the Modelfile's num_ctx wins over the server default
        provider = OpenAICompatProvider("qwen", base_url=s.base_url)
        await provider.discover_window()
        assert provider.context_window == 8_192 and not s.loaded
        await provider.aclose()


@pytest.mark.parametrize("flavor", ["llamacpp", "litellm", "lmstudio", "tgi", "gemini"])
async def test_refusals_of_each_server_teach_the_window(flavor: Flavor, tmp_path: Path) -> None:
    """Each server's own shape: llama.cpp's fields, LiteLLM's wrapping, LM Studio's string
    ``error``, TGI's 422 with a string ``error``, Gemini's list-shaped body."""
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer(
        [ok], context_window=2_000, flavor=flavor, announce_window=False
    ) as server:
        provider = OpenAICompatProvider(
            "qwen", base_url=server.base_url, windows=WindowBook.in_dir(tmp_path)
        )
        assert provider.context_window == FALLBACK_WINDOW
        with pytest.raises(PromptTooLongError) as refused:
            await drain(provider, "x" * 20_000)
        assert refused.value.limit == 2_000
        assert refused.value.tokens is not None and refused.value.tokens > 2_000
        assert str(refused.value) == server.rejected[0].message  # the server's own words
        assert provider.context_window == 2_000
        await drain(provider, "small")
        await provider.aclose()


async def test_a_side_request_to_another_model_leaves_the_main_window_alone(
    tmp_path: Path,
) -> None:
    """WebFetch's small model goes through the session's provider: what the server takes
    from it, or refuses, says nothing of the main model's window."""
    book = WindowBook.in_dir(tmp_path)
    ok = [{"type": "text", "text": "ok"}]
    with FakeAnthropicServer([ok, ok]) as api:
        base = api.base_url
        book.learn(base, "claude-sonnet-4-6", 20_000, "k")
        provider = AnthropicProvider(
            "claude-sonnet-4-6", base_url=api.base_url, api_key="k", windows=book
        )
        side = SideModel(provider, "claude-haiku-4-5")
        await side.answer("Answer.", "x" * 200_000)  # taken, far above 20k
        assert api.input_tokens[-1] > 20_000
        api.context_window = 3_000
        with pytest.raises(PromptTooLongError):
            await side.answer("Answer.", "x" * 20_000)
        assert provider.context_window == 20_000
        assert book.entries(api.base_url, "claude-haiku-4-5") == {}
        await provider.aclose()
    assert book.get(base, "claude-sonnet-4-6", "k") == 20_000
    ok = [{"type": "text", "text": "ok"}]
    with FakeOpenAIServer([ok, ok], announce_window=False) as server:
        book.learn(server.base_url, "qwen", 2_000)
        compat = OpenAICompatProvider("qwen", base_url=server.base_url, windows=book)
        async for _ in compat.stream(replace(request("x" * 40_000), model="qwen-small")):
            pass
        assert compat.context_window == 2_000
        await compat.aclose()
